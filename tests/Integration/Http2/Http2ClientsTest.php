<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Http2;

use PHPUnit\Framework\TestCase;
use Weft\Http2\Frame;
use Weft\Tests\Support\RawHttp2;
use Weft\Tests\Support\ServerProcess;
use Weft\Tests\Support\TestCa;

/**
 * HTTP/2 against the real clients: curl with prior knowledge on cleartext (h2c) and by ALPN over TLS,
 * nghttp, h2load, and a headless Chromium over HTTPS with a CA made here. Each stream is a request
 * like an HTTP/1.1 one: the same application, access log (HTTP/2.0), bodies both ways.
 */
final class Http2ClientsTest extends TestCase
{
    private const APP = __DIR__ . '/fixtures/h2-app.php';

    public function testCurlWithPriorKnowledgeOnCleartext(): void
    {
        $dir = \sys_get_temp_dir() . '/weft-h2-' . \bin2hex(\random_bytes(4));
        \mkdir($dir);
        $log = "$dir/access.log";
        $server = new ServerProcess([self::APP, '--workers', '1', '--access-log', $log]);
        $base = "http://127.0.0.1:{$server->port}";
        [$code, $out] = self::exec(['curl', '-sS', '--http2-prior-knowledge', '-w', '\n%{http_version}', "$base/"]);
        self::assertSame([0, "Hello World\n2"], [$code, $out]);

        // A body of 3 MB up (many DATA frames, the windows given back as it is read) and 1 MB down.
        $body = "$dir/body";
        \file_put_contents($body, \random_bytes(3 * 1024 * 1024));
        [$code, $out] = self::exec(['curl', '-sS', '--http2-prior-knowledge', '--data-binary', "@$body", '-H', 'Cookie: a=1', '-H', 'Cookie: b=2', "$base/echo"]);
        self::assertSame(0, $code, $out);
        $echo = \json_decode($out, true);
        self::assertSame(['POST', '2.0', 'http', "127.0.0.1:{$server->port}", 3 * 1024 * 1024, \md5_file($body)],
            [$echo['method'], $echo['version'], $echo['scheme'], $echo['host'], $echo['length'], $echo['md5']]);
        [$code, $out] = self::exec(['curl', '-sS', '--http2-prior-knowledge', "$base/big"]);
        self::assertSame(0, $code);
        self::assertSame(\str_repeat('0123456789abcdef', 65536), $out);
        [$code, $out] = self::exec(['curl', '-sS', '--http2-prior-knowledge', "$base/stream"]);
        self::assertSame([0, "chunk 0\nchunk 1\nchunk 2\nchunk 3\nchunk 4\n"], [$code, $out]);
        [$code, $out] = self::exec(['curl', '-sS', '--http2-prior-knowledge', '-I', "$base/"]);
        self::assertSame(0, $code);
        self::assertMatchesRegularExpression('~^HTTP/2 200 ?\r\n~', $out);
        self::assertStringContainsString("content-length: 11\r\n", $out);
        // A header block larger than a frame goes out as HEADERS and CONTINUATION frames.
        [$code, $out] = self::exec(['curl', '-sS', '--http2-prior-knowledge', '-D', '-', "$base/big-head"]);
        self::assertSame(0, $code, $out);
        self::assertStringContainsString('x-large: ' . \str_repeat('h', 40000) . "\r\n", $out);
        self::assertStringEndsWith("\r\n\r\nok", $out);
        // (Several URLs on one curl command line would reuse the connection, which curl 7.88 gets wrong
        // with prior knowledge: curl/curl#10634. nghttp and h2load below put many streams on one.)
        // An HTTP/1.1 client on the same port is served as before, and curl's Upgrade: h2c is answered in HTTP/1.1.
        [$code, $out] = self::exec(['curl', '-sS', '--http1.1', '-w', ' %{http_version}', "$base/"]);
        self::assertSame([0, 'Hello World 1.1'], [$code, $out]);
        [$code, $out] = self::exec(['curl', '-sS', '--http2', '-w', ' %{http_version}', "$base/"]);
        self::assertSame([0, 'Hello World 1.1'], [$code, $out]);

        ServerProcess::waitFor(static fn () => \substr_count((string) @\file_get_contents($log), "\n") >= 8 ?: null, 10, 'the access log');
        self::assertMatchesRegularExpression('~^127\.0\.0\.1 - - \[[^]]+\] "POST /echo HTTP/2\.0" 200 \d+ "-" "curl/[^"]+" ~m', (string) \file_get_contents($log));
        $server->stop();
        \array_map('unlink', \glob("$dir/*"));
        \rmdir($dir);
    }

    public function testNghttpAndH2load(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1']);
        [$code, $out] = self::exec(['nghttp', '-v', "http://127.0.0.1:{$server->port}/stream"]);
        self::assertSame(0, $code, $out);
        self::assertStringContainsString('recv SETTINGS frame', $out);
        self::assertStringContainsString('(niv=4)', $out); // ours: max streams, push off, header list size, stream window
        self::assertStringContainsString('[SETTINGS_MAX_CONCURRENT_STREAMS(0x03):100]', $out);
        self::assertStringContainsString('recv (stream_id=13) :status: 200', $out);
        self::assertStringContainsString("chunk 4\n", $out);
        // Many streams over a few connections, every one answered.
        [$code, $out] = self::exec(['h2load', '-n200', '-c10', '-m10', "http://127.0.0.1:{$server->port}/"]);
        self::assertSame(0, $code, $out);
        self::assertStringContainsString('requests: 200 total, 200 started, 200 done, 200 succeeded, 0 failed, 0 errored, 0 timeout', $out);
        self::assertStringContainsString('status codes: 200 2xx', $out);
        $server->stop();
    }

    public function testStaticFilesGzipAndSyncModeOverHttp2(): void
    {
        $dir = \sys_get_temp_dir() . '/weft-h2-static-' . \bin2hex(\random_bytes(4));
        \mkdir($dir);
        \file_put_contents("$dir/page.txt", \str_repeat("the same line, compressible\n", 20000));
        $server = new ServerProcess([self::APP, '--workers', '1', '--mode', 'sync', '--static', $dir]);
        $base = "http://127.0.0.1:{$server->port}";
        [$code, $out] = self::exec(['curl', '-sS', '--http2-prior-knowledge', '--compressed', '-D', "$dir/head", "$base/page.txt"]);
        self::assertSame(0, $code, $out);
        self::assertSame(\file_get_contents("$dir/page.txt"), $out);
        self::assertStringContainsString("content-encoding: gzip\r\n", (string) \file_get_contents("$dir/head"));
        [$code, $out] = self::exec(['curl', '-sS', '--http2-prior-knowledge', '-H', 'Range: bytes=0-7', '-w', ' %{http_code}', "$base/page.txt"]);
        self::assertSame([0, 'the same 206'], [$code, $out]);
        // Sync mode: one application call at a time, streams queued behind it, all answered.
        [$code, $out] = self::exec(['h2load', '-n300', '-c3', '-m10', "$base/"]);
        self::assertSame(0, $code, $out);
        self::assertStringContainsString('300 succeeded, 0 failed, 0 errored, 0 timeout', $out);
        $server->stop();
        \array_map('unlink', \glob("$dir/*"));
        \rmdir($dir);
    }

    public function testAPsr15ApplicationOverHttp2(): void
    {
        $server = new ServerProcess([__DIR__ . '/../fixtures/psr15.php', '--workers', '1']);
        [$code, $out] = self::exec(['curl', '-sS', '--http2-prior-knowledge', '-D', '-', '-H', 'X-Test: over h2', '--data', 'a=1&b=2', "http://127.0.0.1:{$server->port}/form?q=1"]);
        self::assertSame(0, $code, $out);
        self::assertMatchesRegularExpression('~^HTTP/2 201 ?\r\n~', $out);
        self::assertStringContainsString("x-psr: yes\r\n", $out);
        self::assertStringEndsWith('{"method":"POST","path":"\/form","query":{"q":"1"},"parsed":{"a":"1","b":"2"},"header":"over h2"}', $out);
        $server->stop();
    }

    public function testBodiesOfManyStreamsCountInTheWorkersBudget(): void
    {
        // Half of --memory-limit (32 MB) bounds what a worker holds of request bodies; twelve streams of
        // 4 MB on one connection, all held by a slow application, go beyond it: the streams past the
        // budget get a 503, the others are served, the worker lives on.
        $server = new ServerProcess([self::APP, '--workers', '1', '--memory-limit', '64M', '--max-body', '4M']);
        $pid = self::exec(['curl', '-sS', '--http2-prior-knowledge', "http://127.0.0.1:{$server->port}/pid"])[1];
        $body = \tempnam(\sys_get_temp_dir(), 'weft-h2-body');
        \file_put_contents($body, \random_bytes(4000000));
        [$code, $out] = self::exec(['h2load', '-d', $body, '-n12', '-c1', '-m12', "http://127.0.0.1:{$server->port}/sleep?s=1"]);
        \unlink($body);
        self::assertSame(0, $code, $out);
        self::assertStringContainsString('requests: 12 total, 12 started, 12 done', $out);
        self::assertSame(1, \preg_match('/status codes: (\d+) 2xx, 0 3xx, 0 4xx, (\d+) 5xx/', $out, $m), $out);
        self::assertGreaterThan(0, (int) $m[1]);
        self::assertGreaterThan(0, (int) $m[2]);
        self::assertStringContainsString('over its budget of 33554432', $server->output());
        self::assertSame($pid, self::exec(['curl', '-sS', '--http2-prior-knowledge', "http://127.0.0.1:{$server->port}/pid"])[1]);
        $server->stop();
    }

    public function testCurlNghttpAndChromiumOverTlsChooseH2ByAlpn(): void
    {
        $ca = new TestCa();
        $cert = $ca->issue('localhost');
        $server = new ServerProcess([self::APP, '--workers', '1', '--tls-cert', $cert['cert'], '--tls-key', $cert['key']]);
        $base = "https://localhost:{$server->port}";
        [$code, $out] = self::exec(['curl', '-sS', '--http2', '--cacert', $ca->caFile, '-w', ' %{http_version}', "$base/"]);
        self::assertSame([0, 'Hello World 2'], [$code, $out]);
        [$code, $out] = self::exec(['curl', '-sS', '--http2', '--cacert', $ca->caFile, "$base/echo"]);
        self::assertSame(0, $code, $out);
        self::assertSame(['2.0', 'https'], [\json_decode($out, true)['version'], \json_decode($out, true)['scheme']]);
        [$code, $out] = self::exec(['curl', '-sS', '--http2', '--cacert', $ca->caFile, "$base/big"]);
        self::assertSame([0, 1024 * 1024], [$code, \strlen($out)]);
        // A client that offers only HTTP/1.1 is served HTTP/1.1.
        [$code, $out] = self::exec(['curl', '-sS', '--http1.1', '--cacert', $ca->caFile, '-w', ' %{http_version}', "$base/"]);
        self::assertSame([0, 'Hello World 1.1'], [$code, $out]);
        [, $output] = $ca->sClient($server->port, ['-alpn', 'h2,http/1.1']);
        self::assertStringContainsString('ALPN protocol: h2', $output);

        [$code, $out] = self::exec(['h2load', '-n200', '-c10', '-m10', "https://127.0.0.1:{$server->port}/"]);
        self::assertSame(0, $code, $out);
        self::assertStringContainsString('Application protocol: h2', $out);
        self::assertStringContainsString('200 succeeded, 0 failed, 0 errored, 0 timeout', $out);

        // Chromium trusts the test's certificate by its public key's hash (no system CA store touched).
        $spki = \base64_encode(\hash('sha256', self::publicKeyDer($cert['cert']), true));
        $profile = \sys_get_temp_dir() . '/weft-h2-chromium-' . \bin2hex(\random_bytes(4));
        [$code, $out] = self::exec(['timeout', '60', '/usr/bin/chromium', '--headless', '--no-sandbox', '--disable-gpu', "--user-data-dir=$profile",
            "--ignore-certificate-errors-spki-list=$spki", '--dump-dom', "https://localhost:{$server->port}/echo"]);
        self::assertSame(0, $code, $out);
        self::assertStringContainsString('"version":"2.0","scheme":"https"', \html_entity_decode($out), $out);
        self::removeTree($profile);
        $server->stop();

        // --http2 off: ALPN offers HTTP/1.1 only, and a cleartext preface is an HTTP/1.1 error.
        $server = new ServerProcess([self::APP, '--workers', '1', '--tls-cert', $cert['cert'], '--tls-key', $cert['key'], '--http2', 'off']);
        [$code, $out] = self::exec(['curl', '-sS', '--http2', '--cacert', $ca->caFile, '-w', ' %{http_version}', "https://localhost:{$server->port}/"]);
        self::assertSame([0, 'Hello World 1.1'], [$code, $out]);
        $server->stop();
    }

    public function testGracefulStopSendsGoawayAndAnswersTheStreamsInFlight(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1']);
        $client = new RawHttp2($server->address());
        $client->send($client->headers(1, '/sleep?s=1'));
        // The stream is in the application when the worker drains (its SETTINGS answered first).
        $client->readUntil(Frame::SETTINGS);
        \usleep(200000);
        $stopped = \proc_open([\PHP_BINARY, \dirname(__DIR__, 3) . '/bin/weft', 'stop', '--pid-file', $server->pidFile, '--timeout', '20'], [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        self::assertSame([Frame::NO_ERROR, 1], $client->goaway());
        $answer = $client->response(1);
        self::assertSame([200, 'slept'], [$answer['status'], $answer['body']]);
        self::assertTrue($client->closed());
        \proc_close($stopped);
        $server->stop();
    }

    public function testTheConnectionTimersApply(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--idle-timeout', '1', '--header-timeout', '1']);
        // Idle after its request: closed after --idle-timeout.
        $client = new RawHttp2($server->address());
        $client->send($client->headers(1, '/'));
        self::assertSame(200, $client->response(1)['status']);
        $started = \microtime(true);
        self::assertTrue($client->closed());
        self::assertGreaterThan(0.8, \microtime(true) - $started);
        // Half a preface: closed after --header-timeout.
        $client = new RawHttp2($server->address(), 10.0, false);
        $client->send(\substr(Frame::PREFACE, 0, 10));
        $started = \microtime(true);
        self::assertTrue($client->closed());
        self::assertGreaterThan(0.8, \microtime(true) - $started);
        // A client that never acknowledges our SETTINGS (§6.5.3): GOAWAY SETTINGS_TIMEOUT after
        // --header-timeout, even while its stream runs; one that acknowledges them keeps its connection.
        $client = new RawHttp2($server->address());
        $client->ackSettings = false;
        $client->send($client->headers(1, '/sleep?s=3'));
        self::assertSame([Frame::SETTINGS_TIMEOUT, 1], $client->goaway());
        self::assertTrue($client->closed());
        $client = new RawHttp2($server->address());
        $client->send($client->headers(1, '/sleep?s=2'));
        self::assertSame([200, 'slept'], \array_values(\array_intersect_key($client->response(1), ['status' => 0, 'body' => 0])));
        $client->close();
        $server->stop();
    }

    public function testAFatalErrorAnswersEveryStreamInFlight(): void
    {
        // The stream whose code hit the memory limit gets a 500, the other one in flight a 503, not a
        // connection cut under both; the worker is replaced.
        $server = new ServerProcess([self::APP, '--workers', '1', '--memory-limit', '64M']);
        $client = new RawHttp2($server->address());
        $client->send($client->headers(1, '/sleep?s=5'));
        \usleep(200000);
        $client->send($client->headers(3, '/fatal'));
        $others = [];
        self::assertSame(500, $client->response(3, $others)['status']);
        $statuses = [];
        foreach ($others as $frame) {
            foreach ($frame['fields'] ?? [] as [$name, $value]) {
                if ($name === ':status') {
                    $statuses[$frame['stream']] = (int) $value;
                }
            }
        }
        self::assertSame([1 => 503], $statuses);
        ServerProcess::waitFor(static fn () => self::exec(['curl', '-sS', '--http2-prior-knowledge', "http://127.0.0.1:{$server->port}/"])[1] === 'Hello World' ?: null, 10, 'a new worker');
        $server->stop();
    }

    private static function removeTree(string $dir): void
    {
        if (!\is_dir($dir)) {
            return;
        }
        $entries = new \RecursiveIteratorIterator(new \RecursiveDirectoryIterator($dir, \FilesystemIterator::SKIP_DOTS), \RecursiveIteratorIterator::CHILD_FIRST);
        foreach ($entries as $entry) {
            $entry->isDir() && !$entry->isLink() ? @\rmdir($entry->getPathname()) : @\unlink($entry->getPathname());
        }
        @\rmdir($dir);
    }

    private static function publicKeyDer(string $certFile): string
    {
        $pem = \openssl_pkey_get_details(\openssl_pkey_get_public((string) \file_get_contents($certFile)))['key'];
        return \base64_decode(\preg_replace('/-----[^-]+-----|\s/', '', $pem));
    }

    /** @param list<string> $command @return array{int, string} */
    private static function exec(array $command): array
    {
        $process = \proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = (string) \stream_get_contents($pipes[1]);
        $err = (string) \stream_get_contents($pipes[2]);
        $code = \proc_close($process);
        return [$code, $code === 0 ? $out : $out . $err];
    }
}
