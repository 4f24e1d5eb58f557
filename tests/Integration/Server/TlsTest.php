<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Server;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\ServerProcess;
use Weft\Tests\Support\TestCa;

/**
 * TLS in Weft itself (--tls-cert), against real clients: curl and openssl s_client with a CA made here,
 * PHP's own TLS client for a connection held across a reload, raw sockets for the hostile cases. After
 * every hostile case the same worker still serves.
 */
final class TlsTest extends TestCase
{
    private const APP = __DIR__ . '/fixtures/tls-app.php';

    private TestCa $ca;

    protected function setUp(): void
    {
        $this->ca = new TestCa();
    }

    public function testCurlGetsTheAnswerAndTheRequestSaysHttps(): void
    {
        $cert = $this->ca->issue('localhost');
        $log = $this->ca->dir . '/access.log';
        $server = new ServerProcess([self::APP, '--workers', '1', '--tls-cert', $cert['cert'], '--tls-key', $cert['key'], '--access-log', $log]);
        self::assertSame([0, 'Hello over TLS'], $this->curl($server->port, '/'));
        [$code, $body] = $this->curl($server->port, '/scheme');
        self::assertSame(0, $code);
        self::assertSame(['scheme' => 'https', 'https' => 'on'], \json_decode($body, true));
        // Plain HTTP/1.1 on the wire inside TLS: keep-alive works (two requests, one connection).
        [$code, $out] = $this->exec(['curl', '-sS', '--http1.1', '--cacert', $this->ca->caFile, '-w', ' %{num_connects}', "https://localhost:{$server->port}/", "https://localhost:{$server->port}/"]);
        self::assertSame('Hello over TLS 1Hello over TLS 0', $out);
        // The access log line is the same as over plain HTTP.
        ServerProcess::waitFor(static fn () => \substr_count((string) @\file_get_contents($log), "\n") >= 4 ?: null, 10, 'the access log');
        self::assertMatchesRegularExpression('~^127\.0\.0\.1 - - \[[^]]+\] "GET /scheme HTTP/1\.1" 200 \d+ "-" "curl/[^"]+" ~m', (string) \file_get_contents($log));
        $server->stop();
    }

    public function testLargeBodiesBothWaysAndAWebSocketOverTls(): void
    {
        $cert = $this->ca->issue('localhost');
        $server = new ServerProcess([__DIR__ . '/../../../examples/websocket-echo.php', '--workers', '1', '--tls-cert', $cert['cert'], '--tls-key', $cert['key']]);
        // wss:// through Python's websockets (many TLS records each way for the large message).
        $script = <<<'PY'
            import asyncio, ssl, sys, websockets
            async def main():
                ctx = ssl.create_default_context(cafile=sys.argv[1])
                async with websockets.connect("wss://localhost:%s/" % sys.argv[2], ssl=ctx) as ws:
                    for message in ["hello over wss", "x" * 300000]:
                        await ws.send(message)
                        print(len(await ws.recv()))
            asyncio.run(main())
            PY;
        [$code, $out] = $this->exec(['/usr/bin/python3', '-c', $script, $this->ca->caFile, (string) $server->port]);
        self::assertSame([0, "14\n300000\n"], [$code, $out]);
        $server->stop();

        $server = new ServerProcess([self::APP, '--workers', '1', '--tls-cert', $cert['cert'], '--tls-key', $cert['key']]);
        $body = $this->ca->dir . '/body';
        \file_put_contents($body, \random_bytes(3 * 1024 * 1024));
        [$code, $out] = $this->exec(['curl', '-sS', '--cacert', $this->ca->caFile, '--data-binary', "@$body", '-H', 'Content-Type: application/octet-stream', "https://localhost:{$server->port}/echo"]);
        self::assertSame(0, $code, $out);
        self::assertTrue($out === \file_get_contents($body), 'the 3 MB body came back whole');
        $server->stop();
    }

    public function testTls12And13OnlyAndAlpnOffersWhatIsServed(): void
    {
        $cert = $this->ca->issue('localhost');
        $server = new ServerProcess([self::APP, '--workers', '1', '--tls-cert', $cert['cert'], '--tls-key', $cert['key']]);
        foreach (['-tls1_2' => 'TLSv1.2', '-tls1_3' => 'TLSv1.3'] as $flag => $version) {
            [$code, $output] = $this->ca->sClient($server->port, [$flag, '-servername', 'localhost']);
            self::assertSame(0, $code, $output);
            self::assertStringContainsString("New, $version, Cipher is", $output);
            self::assertStringContainsString('Verify return code: 0 (ok)', $output);
        }
        // TLS 1.1 is refused by the server (the client is told to allow it).
        [$code, $output] = $this->ca->sClient($server->port, ['-tls1_1', '-cipher', 'DEFAULT@SECLEVEL=0']);
        self::assertNotSame(0, $code, $output);
        // A TLS 1.2 cipher outside the intermediate policy (CBC) is refused.
        [$code, $output] = $this->ca->sClient($server->port, ['-tls1_2', '-cipher', 'ECDHE-RSA-AES128-SHA']);
        self::assertNotSame(0, $code, $output);
        [, $output] = $this->ca->sClient($server->port, ['-alpn', 'h2,http/1.1']);
        self::assertStringContainsString('ALPN protocol: h2', $output);
        [, $output] = $this->ca->sClient($server->port, ['-alpn', 'http/1.1']);
        self::assertStringContainsString('ALPN protocol: http/1.1', $output);
        $server->stop();
        // With --http2 off only http/1.1 is offered: a client that offers only h2 gets no ALPN answer, not h2.
        $server = new ServerProcess([self::APP, '--workers', '1', '--tls-cert', $cert['cert'], '--tls-key', $cert['key'], '--http2', 'off']);
        [, $output] = $this->ca->sClient($server->port, ['-alpn', 'h2,http/1.1']);
        self::assertStringContainsString('ALPN protocol: http/1.1', $output);
        [, $output] = $this->ca->sClient($server->port, ['-alpn', 'h2']);
        self::assertStringContainsString('No ALPN negotiated', $output);
        $server->stop();
    }

    public function testSniChoosesTheCertificateByServerName(): void
    {
        $default = $this->ca->issue('default', ['default.test']);
        $other = $this->ca->issue('other', ['other.test']);
        $wild = $this->ca->issue('wild', ['*.wild.test']);
        // other.test's key is in its own file; *.wild.test's in the certificate's file.
        \file_put_contents($wild['cert'], \file_get_contents($wild['cert']) . \file_get_contents($wild['key']));
        $server = new ServerProcess([self::APP, '--workers', '1',
            '--tls-cert', "{$default['cert']},other.test={$other['cert']},*.wild.test={$wild['cert']}",
            '--tls-key', "{$default['key']},other.test={$other['key']}"]);
        self::assertSame($other['serial'], $this->ca->servedSerial($server->port, 'other.test'));
        self::assertSame($wild['serial'], $this->ca->servedSerial($server->port, 'a.wild.test'));
        self::assertSame($default['serial'], $this->ca->servedSerial($server->port, 'unknown.test'));
        [$code, $out] = $this->exec(['curl', '-sS', '--cacert', $this->ca->caFile, '--resolve', "other.test:{$server->port}:127.0.0.1", "https://other.test:{$server->port}/"]);
        self::assertSame([0, 'Hello over TLS'], [$code, $out]);
        $server->stop();
    }

    public function testSessionsResumeAcrossWorkers(): void
    {
        $cert = $this->ca->issue('localhost');
        $server = new ServerProcess([self::APP, '--workers', '2', '--tls-cert', $cert['cert'], '--tls-key', $cert['key']]);
        // The server restarts PHP with the extension built in this checkout, except under WEFT_NO_REEXEC.
        $native = \getenv('WEFT_NO_REEXEC') === false ? \is_file(\dirname(__DIR__, 3) . '/ext/modules/weft.so') : \extension_loaded('weft');
        if (!$native) {
            self::assertStringContainsString('TLS session resumption off: PHP alone builds a new SSL context', $server->output());
        }
        foreach (['-tls1_2', '-tls1_3'] as $version) {
            $session = $this->ca->dir . "/session$version";
            [$first, $resumed] = $this->pidOverTls($server->port, [$version, '-sess_out', $session]);
            self::assertFalse($resumed);
            // Until a connection lands on the other worker (the kernel picks; a handful is plenty).
            for ($i = 0; $i < 60; $i++) {
                [$pid, $resumed] = $this->pidOverTls($server->port, [$version, '-sess_in', $session]);
                self::assertSame($native, $resumed, "$version, connection $i");
                if ($pid !== $first) {
                    break;
                }
            }
            self::assertNotSame($first, $pid, 'no connection reached the second worker');
        }
        $server->stop();
    }

    public function testHostileClientsCostTheirConnectionOnly(): void
    {
        $cert = $this->ca->issue('localhost');
        $server = new ServerProcess([self::APP, '--workers', '1', '--tls-cert', $cert['cert'], '--tls-key', $cert['key'], '--tls-handshake-timeout', '2', '--log-level', 'debug']);
        [, $pid] = $this->curl($server->port, '/pid');

        // Stalls: nothing at all, and half a ClientHello. The worker serves others meanwhile.
        $silent = $this->connect($server->port);
        $truncated = $this->connect($server->port);
        \fwrite($truncated, "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" . \random_bytes(20));
        self::assertSame([0, $pid], $this->curl($server->port, '/pid'));
        foreach ([$silent, $truncated] as $stalled) {
            self::assertSame('', $this->readToEnd($stalled), "closed at --tls-handshake-timeout, without an answer\n" . $server->output());
        }

        // Garbage that is not a TLS record, and a handshake record that is not a ClientHello.
        foreach (["\x00\x01\x02garbage\r\n\r\n", "\x16\x03\x01\x00\x05hello"] as $bytes) {
            $client = $this->connect($server->port);
            \fwrite($client, $bytes);
            $answer = $this->readToEnd($client);
            self::assertTrue($answer === '' || $answer[0] === "\x15", 'closed, at most after a TLS alert: ' . \bin2hex($answer));
        }

        // Plain HTTP on the TLS port: nginx's answer.
        $client = $this->connect($server->port);
        \fwrite($client, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
        $answer = $this->readToEnd($client);
        self::assertStringStartsWith("HTTP/1.1 400 Bad Request\r\n", $answer);
        self::assertStringEndsWith("The plain HTTP request was sent to HTTPS port\n", $answer);

        // A client that closes before its hello.
        \fclose($this->connect($server->port));

        self::assertSame([0, $pid], $this->curl($server->port, '/pid'), 'the same worker serves on');
        $status = $server->status();
        self::assertSame(0, $status['master']['restarts']);
        // Counted in the worker's figures (reported once a second).
        ServerProcess::waitFor(static fn () => ($server->status()['workers'][0]['tls_handshake_failures'] ?? 0) >= 6 ?: null, 10, 'the failed handshakes counted');
        $server->stop();
    }

    public function testHandshakesInProgressAreBoundedByMaxConnections(): void
    {
        $cert = $this->ca->issue('localhost');
        $server = new ServerProcess([self::APP, '--workers', '1', '--tls-cert', $cert['cert'], '--tls-key', $cert['key'],
            '--max-connections', '2', '--tls-handshake-timeout', '60']);
        $stalled = [$this->connect($server->port), $this->connect($server->port)];
        // The two stalled handshakes hold the worker's two places: a third connection is closed at once
        // (readToEnd() gives up after 15 s, long before the 60 s handshake timeout).
        ServerProcess::waitFor(static fn () => ($server->status()['workers'][0]['tls_handshakes_pending'] ?? 0) === 2 ?: null, 10, 'two handshakes pending');
        self::assertSame('', $this->readToEnd($this->connect($server->port)));
        // Clients that give up free their places.
        foreach ($stalled as $client) {
            \fclose($client);
        }
        $served = ServerProcess::waitFor(fn () => $this->curl($server->port, '/')[0] === 0 ?: null, 15, 'a freed place');
        self::assertTrue($served);
        $server->stop();
    }

    public function testReloadServesRenewedCertificatesAndRefusesAKeyThatDoesNotMatch(): void
    {
        $first = $this->ca->issue('site');
        $server = new ServerProcess([self::APP, '--workers', '1', '--tls-cert', $first['cert'], '--tls-key', $first['key']]);
        self::assertSame($first['serial'], $this->ca->servedSerial($server->port));
        $held = $this->tlsClient($server->port);
        self::assertSame('Hello over TLS', $this->request($held, false));

        // Renewed in place (a new key too, as certbot does by default), then reloaded.
        \unlink($first['key']);
        $renewed = $this->ca->issue('site');
        [$code, $output] = $server->control('reload');
        self::assertSame(0, $code, $output);
        self::assertSame($renewed['serial'], $this->ca->servedSerial($server->port));
        // The connection made before the reload is still served (then closed: its worker drained).
        self::assertSame('Hello over TLS', $this->request($held, true));

        // A key that does not match its certificate: the reload fails, saying so, and the renewed
        // certificate is still served.
        \copy($this->ca->strayKey('stray'), $renewed['key']);
        [$code, $output] = $server->control('reload');
        self::assertNotSame(0, $code, $output);
        self::assertStringContainsString("TLS key {$renewed['key']} does not match certificate {$renewed['cert']}", $output);
        self::assertSame($renewed['serial'], $this->ca->servedSerial($server->port));
        self::assertSame([0, 'Hello over TLS'], $this->curl($server->port, '/'));
        $server->stop();
    }

    public function testStartRefusesCertificatesItCannotServe(): void
    {
        $cert = $this->ca->issue('localhost');
        $stray = $this->ca->strayKey('stray');
        $cases = [
            [['--tls-cert', $cert['cert'], '--tls-key', $stray], "TLS key $stray does not match certificate {$cert['cert']}", 1],
            [['--tls-cert', $cert['cert'] . '.missing'], 'TLS certificate file ' . $cert['cert'] . '.missing not found', 1],
            [['--tls-cert', $cert['key'], '--tls-key', $cert['key']], "TLS certificate {$cert['key']} holds no PEM certificate", 1],
            [['--tls-cert', "a.test={$cert['cert']}"], "option '--tls-cert' needs a default certificate", 2],
            [['--tls-key', $cert['key']], "option '--tls-key' needs --tls-cert", 2],
            [['--tls-cert', $cert['cert'], '--tls-key', $cert['key'], '--tls-ciphers', 'NO-SUCH-CIPHER'], "A TLS handshake with these certificates and settings fails: OpenSSL refused it: check --tls-ciphers 'NO-SUCH-CIPHER'", 1],
            [['--tls-cert', $cert['cert'], '--tls-key', $cert['key'], '--hsts', '60', '--protocol', 'line'], "options '--redirect-http' and '--hsts' need --protocol http", 2],
            [['--hsts', '60'], "option '--hsts' needs --tls-cert", 2],
            [['--tls-cert', $cert['cert'], '--tls-key', $cert['key'], '--mode', 'fpm'], "option '--tls-cert' is not available in fpm mode", 2],
        ];
        foreach ($cases as [$args, $message, $exit]) {
            [$code, $output] = ServerProcess::cli(['serve', self::APP, '--port', '0', '--workers', '1', ...$args], 30);
            self::assertSame($exit, $code, $output);
            self::assertStringContainsString($message, $output);
        }
    }

    public function testPlainHttpListenerRedirectsAndHstsIsSentOverHttps(): void
    {
        $cert = $this->ca->issue('localhost');
        $server = new ServerProcess([self::APP, '--workers', '1', '--tls-cert', $cert['cert'], '--tls-key', $cert['key'],
            '--redirect-http', '127.0.0.1:0', '--hsts', '31536000']);
        self::assertSame(1, \preg_match('/Plain HTTP on 127\.0\.0\.1:(\d+) redirects to HTTPS/', $server->output(), $m), $server->output());
        $plain = (int) $m[1];
        [, $out] = $this->exec(['curl', '-sS', '-o', '/dev/null', '-w', '%{http_code} %{redirect_url}', "http://localhost:$plain/a/b?c=d"]);
        self::assertSame("301 https://localhost:{$server->port}/a/b?c=d", $out);
        [, $out] = $this->exec(['curl', '-sS', '-o', '/dev/null', '-w', '%{http_code}', '-X', 'POST', '-d', 'x=1', "http://localhost:$plain/form"]);
        self::assertSame('308', $out);
        // Followed, the redirect lands on the HTTPS port, whose answers carry HSTS.
        [, $out] = $this->exec(['curl', '-sSL', '--http1.1', '-D', '-', '--cacert', $this->ca->caFile, "http://localhost:$plain/"]);
        self::assertStringContainsString("Strict-Transport-Security: max-age=31536000\r\n", $out);
        self::assertStringEndsWith('Hello over TLS', $out);
        self::assertSame(1, \substr_count($out, 'Strict-Transport-Security'), 'not on the plain-HTTP redirect');
        // The new workers of a reload take the plain-HTTP listener over.
        [$code, $output] = $server->control('reload');
        self::assertSame(0, $code, $output);
        [, $out] = $this->exec(['curl', '-sS', '-o', '/dev/null', '-w', '%{http_code}', "http://localhost:$plain/again"]);
        self::assertSame('301', $out);
        $server->stop();
    }

    /** @param list<string> $args @return array{string, bool} the pid that answered GET /pid, and whether the session was resumed */
    private function pidOverTls(int $port, array $args): array
    {
        [$code, $output] = $this->ca->sClient($port, ['-ign_eof', '-servername', 'localhost', ...$args], "GET /pid HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        self::assertSame(0, $code, $output);
        self::assertSame(1, \preg_match('/^(New|Reused), TLSv/m', $output, $session), $output);
        self::assertSame(1, \preg_match('/\r\n\r\n(\d+)/', $output, $pid), $output);
        return [$pid[1], $session[1] === 'Reused'];
    }

    /** @return array{int, string} curl's exit code and the body */
    private function curl(int $port, string $path): array
    {
        // HTTP/1.1 inside TLS (curl would choose h2 by ALPN: Http2ClientsTest covers that).
        return $this->exec(['curl', '-sS', '--http1.1', '--max-time', '20', '--cacert', $this->ca->caFile, "https://localhost:$port$path"]);
    }

    /** @param list<string> $command @return array{int, string} */
    private function exec(array $command): array
    {
        $process = \proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = (string) \stream_get_contents($pipes[1]);
        $err = (string) \stream_get_contents($pipes[2]);
        $code = \proc_close($process);
        return [$code, $code === 0 ? $out : $out . $err];
    }

    /** @return resource */
    private function connect(int $port): mixed
    {
        $client = \stream_socket_client("tcp://127.0.0.1:$port", $errno, $error, 5);
        self::assertNotFalse($client, $error);
        return $client;
    }

    /** Everything the server sends until it closes (fails after 15 s). @param resource $client */
    private function readToEnd(mixed $client): string
    {
        \stream_set_timeout($client, 15);
        $data = '';
        while (!\feof($client)) {
            $chunk = @\fread($client, 65536);
            if (\stream_get_meta_data($client)['timed_out']) {
                self::fail('The server did not close the connection');
            }
            if ($chunk === false) {
                break; // reset: closed with what the client sent still unread
            }
            $data .= $chunk;
        }
        \fclose($client);
        return $data;
    }

    /** @return resource a TLS connection through PHP's client, verified against the test CA */
    private function tlsClient(int $port): mixed
    {
        $context = \stream_context_create(['ssl' => ['cafile' => $this->ca->caFile, 'peer_name' => 'localhost', 'verify_peer' => true]]);
        $client = \stream_socket_client("tls://127.0.0.1:$port", $errno, $error, 10, \STREAM_CLIENT_CONNECT, $context);
        self::assertNotFalse($client, $error);
        \stream_set_timeout($client, 15);
        return $client;
    }

    /** One GET / on a held connection; the body. @param resource $client */
    private function request(mixed $client, bool $mayClose): string
    {
        \fwrite($client, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
        $response = '';
        while (!\str_contains($response, "\r\n\r\n") || \strlen($response) < \strpos($response, "\r\n\r\n") + 4 + (int) (\preg_match('/content-length: (\d+)/i', $response, $m) ? $m[1] : 0)) {
            $chunk = \fread($client, 65536);
            if ($chunk === '' || $chunk === false) {
                self::assertFalse(\stream_get_meta_data($client)['timed_out'], 'no answer on the held connection');
                if (\feof($client)) {
                    break;
                }
            }
            $response .= $chunk;
        }
        self::assertStringStartsWith('HTTP/1.1 200', $response);
        if (!$mayClose) {
            self::assertStringNotContainsStringIgnoringCase('connection: close', $response);
        }
        return \substr($response, \strpos($response, "\r\n\r\n") + 4);
    }
}
