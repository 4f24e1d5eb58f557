<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Client\Http;

use PHPUnit\Framework\TestCase;
use Weft\Client\Http\Client;
use Weft\Client\Http\ConnectFailed;
use Weft\Client\Http\RequestOptions;
use Weft\Client\Http\RequestTimeout;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Loop\Loop;

use function Weft\go;
use function Weft\run;

/**
 * The client against servers in child processes: examples/delay-server.php (so that sync mode, where
 * nothing else runs in this process while a call blocks, has a server to talk to) and a TLS server.
 */
final class ProcessTest extends TestCase
{
    private static ?ChildProcess $delayServer = null;

    public static function setUpBeforeClass(): void
    {
        self::$delayServer = new ChildProcess([\PHP_BINARY, \dirname(__DIR__, 4) . '/examples/delay-server.php', '--port', '0', '--delay', '0.2']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$delayServer?->stop();
        self::$delayServer = null;
    }

    protected function setUp(): void
    {
        Loop::reset('select');
    }

    protected function tearDown(): void
    {
        Loop::reset('select');
    }

    private static function url(string $path = '/'): string
    {
        return 'http://127.0.0.1:' . self::$delayServer->port . $path;
    }

    public function testSyncModeBlocksAndReusesTheConnection(): void
    {
        $client = new Client();
        $start = \hrtime(true);
        $bodies = [];
        for ($i = 0; $i < 3; $i++) {
            $bodies[] = $client->get(self::url('/?delay=0.05'))->body();
        }
        $elapsed = (\hrtime(true) - $start) / 1e9;
        self::assertSame(['ok', 'ok', 'ok'], $bodies);
        self::assertGreaterThanOrEqual(0.15, $elapsed, 'each call waited for its answer');
        self::assertSame(['requests' => 3, 'opened' => 1, 'reused' => 2, 'retried' => 0, 'idle' => 1], $client->stats());
        $client->close();
    }

    public function testSyncModeTimeout(): void
    {
        $client = new Client(RequestOptions::defaults()->withTimeout(0.2));
        $start = \hrtime(true);
        try {
            $client->get(self::url('/?delay=3'));
            self::fail('no exception');
        } catch (RequestTimeout $e) {
            self::assertStringContainsString('delay=3 timed out after 0.2 s', $e->getMessage());
        }
        self::assertLessThan(2.0, (\hrtime(true) - $start) / 1e9);
    }

    public function testHundredConcurrentRequestsFromOneProcess(): void
    {
        $client = new Client();
        $start = \hrtime(true);
        $bodies = run(static function () use ($client): array {
            $tasks = [];
            for ($i = 0; $i < 100; $i++) {
                $tasks[] = go(static fn () => $client->get(self::url("/?n=$i"))->body());
            }
            return \array_map(static fn ($task) => $task->join(), $tasks);
        });
        $elapsed = (\hrtime(true) - $start) / 1e9;
        self::assertSame(\array_fill(0, 100, 'ok'), $bodies);
        self::assertLessThan(10.0, $elapsed, '100 x 0.2 s overlapped (sequential: 20 s)');

        // Again: now the idle connections are reused (up to the per-origin limit).
        run(static function () use ($client): void {
            $tasks = [];
            for ($i = 0; $i < 20; $i++) {
                $tasks[] = go(static fn () => $client->get(self::url('/?delay=0'))->body());
            }
            foreach ($tasks as $task) {
                $task->join();
            }
        });
        self::assertGreaterThanOrEqual(16, $client->stats()['reused']);
        $client->close();
    }

    public function testTheUpstreamExampleAnswersWithTheUpstreamBody(): void
    {
        \putenv('UPSTREAM_URL=' . self::url('/?delay=0.01'));
        try {
            $handler = require \dirname(__DIR__, 4) . '/examples/upstream.php';
            $responses = run(static function () use ($handler): array {
                $tasks = [];
                for ($i = 0; $i < 5; $i++) {
                    $tasks[] = go(static fn (): Response => $handler(Request::create('GET', '/')));
                }
                return \array_map(static fn ($task) => $task->join(), $tasks);
            });
        } finally {
            \putenv('UPSTREAM_URL');
        }
        foreach ($responses as $response) {
            self::assertSame(200, $response->status());
            self::assertSame('ok', $response->body());
        }
    }

    public function testTls(): void
    {
        $dir = \sys_get_temp_dir() . '/weft-tls-' . \bin2hex(\random_bytes(4));
        \mkdir($dir);
        [$certFile, $keyFile] = self::selfSignedCertificate($dir);
        $server = new ChildProcess([\PHP_BINARY, __DIR__ . '/fixtures/tls-server.php', $certFile, $keyFile]);
        try {
            $url = 'https://127.0.0.1:' . $server->port . '/';
            $client = new Client();
            try {
                $client->get($url);
                self::fail('an unknown self-signed certificate was accepted');
            } catch (ConnectFailed $e) {
                self::assertStringContainsString('TLS handshake failed', $e->getMessage());
                self::assertStringContainsString('certificate verify failed', $e->getMessage());
            }
            $trusted = $client->get($url, [], RequestOptions::defaults()->withCaFile($certFile));
            self::assertSame('secure', $trusted->body());
            $unverified = run(static fn () => $client->get($url, [], RequestOptions::defaults()->withVerifyPeer(false))->body());
            self::assertSame('secure', $unverified);
            $byName = $client->get('https://localhost:' . $server->port . '/', [], RequestOptions::defaults()->withCaFile($certFile));
            self::assertSame('secure', $byName->body());
        } finally {
            $server->stop();
            \array_map('unlink', \glob($dir . '/*'));
            \rmdir($dir);
        }
    }

    /** @return array{string, string} certificate and key files, for localhost and 127.0.0.1 */
    private static function selfSignedCertificate(string $dir): array
    {
        $config = $dir . '/openssl.cnf';
        \file_put_contents($config, <<<'CNF'
            [req]
            distinguished_name = dn
            [dn]
            [ext]
            subjectAltName = DNS:localhost, IP:127.0.0.1
            basicConstraints = critical, CA:TRUE
            keyUsage = digitalSignature, keyEncipherment, keyCertSign
            CNF);
        $options = ['config' => $config, 'digest_alg' => 'sha256', 'x509_extensions' => 'ext', 'req_extensions' => 'ext'];
        $key = \openssl_pkey_new(['private_key_type' => \OPENSSL_KEYTYPE_RSA, 'private_key_bits' => 2048] + $options);
        $csr = \openssl_csr_new(['commonName' => 'localhost'], $key, $options);
        $cert = \openssl_csr_sign($csr, null, $key, 1, $options, \random_int(1, \PHP_INT_MAX));
        \openssl_x509_export_to_file($cert, $dir . '/cert.pem');
        \openssl_pkey_export_to_file($key, $dir . '/key.pem', null, $options);
        return [$dir . '/cert.pem', $dir . '/key.pem'];
    }
}
