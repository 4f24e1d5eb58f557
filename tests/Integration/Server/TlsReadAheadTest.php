<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Server;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\ServerProcess;
use Weft\Tests\Support\TestCa;

/**
 * TLS records that arrive together, or cut anywhere, are all answered without a stall. With the native
 * extension a TLS connection reads ahead (ext/weft_tls.c): one read() takes every record the socket
 * holds, so records can wait inside OpenSSL where neither epoll nor select sees them, and the loop must
 * not wait on the socket while they do. On the native loop the connection's reads and writes run in C
 * (Weft\Ext\Conn over the stream's SSL); WEFT_NATIVE_HTTP=0 keeps the PHP stream path there. Each case
 * goes through every path, and through the select loop without the extension (PHP's own TLS setup, no
 * read-ahead), against the same expectations. The client (fixtures/tls-flights.py) lays the records out
 * on the wire itself and fails when an answer does not come within 10 s.
 */
final class TlsReadAheadTest extends TestCase
{
    private const APP = __DIR__ . '/fixtures/tls-app.php';
    private const CLIENT = __DIR__ . '/fixtures/tls-flights.py';

    private static ?TestCa $ca = null;
    /** @var array{cert: string, key: string} */
    private static array $cert;

    public static function setUpBeforeClass(): void
    {
        self::$ca = new TestCa();
        self::$cert = self::$ca->issue('localhost');
    }

    public static function tearDownAfterClass(): void
    {
        self::$ca = null;
    }

    /** @return iterable<string, array{string, bool, bool}> loop, whether the server runs with the extension, and its native HTTP I/O */
    public static function servers(): iterable
    {
        yield 'native loop, extension' => ['epoll', true, true];
        yield 'native loop, extension, WEFT_NATIVE_HTTP=0' => ['epoll', true, false];
        yield 'select loop, extension' => ['select', true, true];
        yield 'select loop, no extension' => ['select', false, false];
    }

    #[DataProvider('servers')]
    public function testRecordsArrivingTogetherOrCutAnywhereAreAllAnswered(string $loop, bool $extension, bool $nativeHttp): void
    {
        $server = $this->server($loop, $extension, $nativeHttp);
        // Workers report their figures once a second.
        [$native] = ServerProcess::waitFor(static fn () => \array_key_exists('tls_native', $figures = $server->status()['workers'][0] ?? [])
            ? [$figures['tls_native']] : null, 10, "the worker's figures");
        self::assertSame($extension, $native, 'the TLS path under test: ' . $server->output());
        $echo = "split across record boundaries, byte by byte\n";
        foreach (['1.3', '1.2'] as $version) {
            // TLS 1.3: the client's Finished and 20 requests in one write: the handshake's last read
            // takes the requests along.
            self::assertSame("20 ['Hello over TLS']\n", $this->client($server->port, 'pipelined', $version), "TLS $version");
            // A record per byte: the head, then the body, completes only many records later.
            self::assertSame($echo, $this->client($server->port, 'bytewise', $version), "TLS $version");
            // The same records cut into 7-byte writes: a read ends mid-record again and again.
            self::assertSame($echo, $this->client($server->port, 'trickle', $version), "TLS $version");
            // A 1 MB body in 1 KB records, 64 records per write.
            self::assertSame("1048576 True\n", $this->client($server->port, 'upload', $version), "TLS $version");
        }
        self::assertSame(0, $server->status()['master']['restarts']);
        $server->stop();
    }

    /**
     * Bodies over 64 KiB both ways (several reads of several records each), pipelining behind them, a
     * reader too slow for the answer (the connection stops reading, then takes up again), and a peer
     * gone in the middle of a record: each on every path, the worker living on.
     */
    #[DataProvider('servers')]
    public function testBigBodiesASlowReaderAndAPeerGoneMidRecord(string $loop, bool $extension, bool $nativeHttp): void
    {
        $server = $this->server($loop, $extension, $nativeHttp);
        foreach (['1.3', '1.2'] as $version) {
            self::assertSame("300000 True Hello over TLS\n", $this->client($server->port, 'bigpipelined', $version), "TLS $version");
            self::assertSame("12582912 True Hello over TLS\n", $this->client($server->port, 'slowreader', $version), "TLS $version");
            self::assertSame("Hello over TLS\n", $this->client($server->port, 'midrecord', $version), "TLS $version");
            self::assertSame("20 ['Hello over TLS']\n", $this->client($server->port, 'pipelined', $version), "TLS $version: the next client");
        }
        // The cut connections are gone from the worker, which never restarted.
        ServerProcess::waitFor(static fn () => ($server->status()['workers'][0]['connections'] ?? null) === 0 ?: null, 10, 'no connection left');
        self::assertSame(0, $server->status()['master']['restarts']);
        $server->stop();
    }

    private function server(string $loop, bool $extension, bool $nativeHttp): ServerProcess
    {
        if ($extension && !\is_file(\dirname(__DIR__, 3) . '/ext/modules/weft.so')) {
            self::markTestSkipped('the native extension is not built');
        }
        if ($extension && \getenv('WEFT_NO_REEXEC') === '1') {
            self::markTestSkipped('WEFT_NO_REEXEC=1: every server of this run goes without the extension');
        }
        $env = $extension ? [] : ['WEFT_NO_REEXEC' => '1'];
        if (!$nativeHttp) {
            $env['WEFT_NATIVE_HTTP'] = '0';
        }
        return new ServerProcess([self::APP, '--workers', '1', '--loop', $loop, '--tls-cert', self::$cert['cert'], '--tls-key', self::$cert['key']], $env);
    }

    private function client(int $port, string $case, string $version): string
    {
        $process = \proc_open(['/usr/bin/python3', self::CLIENT, self::$ca->caFile, (string) $port, $case, $version],
            [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = (string) \stream_get_contents($pipes[1]);
        $err = (string) \stream_get_contents($pipes[2]);
        $code = \proc_close($process);
        self::assertSame(0, $code, "$case over TLS $version: $out$err");
        return $out;
    }
}
