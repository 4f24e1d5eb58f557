<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Mode;

/**
 * One fpm-mode server (real nginx and php-fpm, 2 workers) for the request tests; the app file is
 * a copy, which the reload test rewrites.
 */
final class FpmModeTest extends FpmTestCase
{
    private static ?ServerProcess $server = null;
    private static string $dir = '';
    private static string $reason = '';

    public static function setUpBeforeClass(): void
    {
        try {
            self::requireFpm();
        } catch (\PHPUnit\Framework\SkippedTest $e) {
            self::$reason = $e->getMessage();
            return;
        }
        self::$dir = self::scratch();
        \copy(self::FIXTURES . '/fpm-app.php', self::$dir . '/app.php');
        // opcache does not cache a file changed in the last 2 s (opcache.file_update_protection).
        \touch(self::$dir . '/app.php', \time() - 3600);
        self::$server = ServerProcess::start([
            'serve', self::$dir . '/app.php', '--mode', 'fpm', '--port', '0', '--workers', '2', '--max-body', '1M',
            '--pid-file', self::$dir . '/weft.pid', '--log-file', self::$dir . '/weft.log',
        ], ['WEFT_FIXTURE_ENV' => 'from the environment']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->kill();
        self::$server = null;
        if (self::$dir !== '') {
            self::removeTree(self::$dir);
        }
    }

    protected function setUp(): void
    {
        if (self::$server === null) {
            self::markTestSkipped(self::$reason);
        }
    }

    private static function port(): int
    {
        return self::$server->port;
    }

    public function testAStreamedBodyNeverExceedsItsDeclaredLength(): void
    {
        $connection = new HttpConnection(self::port());
        try {
            $reply = $connection->request('GET', '/stream-over');
            self::assertSame(200, $reply->status);
            self::assertSame('hello', $reply->body);
            // The next answer on the same connection is ours, not the one the excess tried to forge.
            $next = $connection->request('GET', '/');
            self::assertSame('Hello World', $next->body);
            self::assertArrayNotHasKey('x-forged', $next->headers);
        } finally {
            $connection->close();
        }
        $log = self::waitForLog('exceeded its Content-Length of 5 by');
        self::assertStringContainsString('GET /stream-over', $log);
    }

    public function testAStreamedBodyShorterThanDeclaredClosesTheConnection(): void
    {
        $connection = new HttpConnection(self::port(), timeout: 10);
        try {
            $connection->request('GET', '/stream-short');
            self::fail('a body 8 bytes short was framed as complete');
        } catch (\RuntimeException $e) {
            self::assertStringContainsString('connection closed before the response ended', $e->getMessage());
        } finally {
            $connection->close();
        }
        self::assertStringContainsString('GET /stream-short', self::waitForLog('ended after 2 of its 10 declared byte(s)'));
    }

    public function testHeadAnd204And304SendNoBodyWhateverTheAppWrites(): void
    {
        $connection = new HttpConnection(self::port());
        try {
            foreach ([['HEAD', '/stream-over', 200], ['GET', '/stream-204', 204], ['GET', '/stream-304', 304], ['HEAD', '/stream', 200]] as [$method, $target, $status]) {
                $reply = $connection->request($method, $target);
                self::assertSame($status, $reply->status, "$method $target");
                self::assertSame('', $reply->body);
            }
            // Had any of them carried a body, it would now be read as this response's head.
            self::assertSame('Hello World', $connection->request('GET', '/')->body);
        } finally {
            $connection->close();
        }
    }

    public function testAnInterimStatusFromTheAppIsALogged500(): void
    {
        $reply = HttpConnection::get(self::port(), '/status-101');
        self::assertSame(500, $reply->status);
        self::waitForLog('Status 101 is not a final response');
    }

    private static function waitForLog(string $text): string
    {
        $deadline = \microtime(true) + 10;
        while (true) {
            $log = (string) @\file_get_contents(self::$dir . '/weft.log');
            if (\str_contains($log, $text)) {
                return $log;
            }
            if (\microtime(true) > $deadline) {
                self::fail("the log never said '$text':\n" . \substr($log, -3000));
            }
            \usleep(50_000);
        }
    }

    public function testGet(): void
    {
        $reply = HttpConnection::get(self::port(), '/');
        self::assertSame(200, $reply->status);
        self::assertSame('Hello World', $reply->body);
        self::assertSame('text/plain', $reply->header('content-type'), 'no charset appended, as the app set it');
        self::assertSame('11', $reply->header('content-length'));
        self::assertNull($reply->header('x-powered-by'));
    }

    public function testHeadGetsTheFieldsOnly(): void
    {
        $connection = new HttpConnection(self::port());
        $reply = $connection->request('HEAD', '/');
        self::assertSame(200, $reply->status);
        self::assertSame('', $reply->body);
        self::assertSame(200, $connection->request('GET', '/')->status, 'the connection carries on after HEAD');
        $connection->close();
    }

    public function testPostWithABody(): void
    {
        $body = \random_bytes(200_000);
        $connection = new HttpConnection(self::port());
        $reply = $connection->request('POST', '/echo?a=1&b[]=2', [
            'Content-Type' => 'application/octet-stream',
            'Cookie' => 'sid=a%2Bb; theme=dark',
            'X-Test' => 'yes',
        ], $body);
        $connection->close();
        self::assertSame(200, $reply->status);
        $echo = \json_decode($reply->body, true);
        self::assertSame('POST', $echo['method']);
        self::assertSame('/echo?a=1&b[]=2', $echo['target']);
        self::assertSame(['a' => '1', 'b' => ['2']], $echo['query']);
        self::assertSame('application/octet-stream', $echo['content_type']);
        self::assertSame(200_000, $echo['length']);
        self::assertSame(\md5($body), $echo['md5']);
        self::assertSame(['sid' => 'a+b', 'theme' => 'dark'], $echo['cookies']);
        self::assertSame('127.0.0.1', $echo['remote']);
        self::assertSame('yes', $echo['x_test']);
        self::assertSame('from the environment', $echo['env'], 'clear_env = no');
    }

    public function testFormBodies(): void
    {
        $connection = new HttpConnection(self::port());
        $urlencoded = $connection->request('POST', '/echo', ['Content-Type' => 'application/x-www-form-urlencoded'], 'a=1&b%5B%5D=x+y');
        self::assertSame(['a' => '1', 'b' => ['x y']], \json_decode($urlencoded->body, true)['form']);

        $multipart = "--B\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nvalue\r\n"
            . "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\ncontent\r\n--B--\r\n";
        $reply = $connection->request('POST', '/echo', ['Content-Type' => 'multipart/form-data; boundary=B'], $multipart);
        $connection->close();
        $echo = \json_decode($reply->body, true);
        self::assertSame(['field' => 'value'], $echo['form'], "PHP's own form parsing is off: the Request parses the body");
        self::assertSame(\strlen($multipart), $echo['length']);
    }

    public function testAnUndecodableBodyIsA400(): void
    {
        $connection = new HttpConnection(self::port());
        $reply = $connection->request('POST', '/echo', ['Content-Type' => 'multipart/form-data; boundary=B'], 'not multipart');
        $connection->close();
        self::assertSame(400, $reply->status);
        self::assertStringStartsWith('Bad Request: ', $reply->body);
    }

    public function testBodyOverTheLimitIsRefusedByNginx(): void
    {
        $connection = new HttpConnection(self::port());
        $reply = $connection->request('POST', '/echo', ['Content-Type' => 'application/octet-stream'], \str_repeat('x', 1024 * 1024 + 1));
        $connection->close();
        self::assertSame(413, $reply->status);
    }

    public function testAHandlerExceptionIsA500AndALogLine(): void
    {
        $reply = HttpConnection::get(self::port(), '/boom');
        self::assertSame(500, $reply->status);
        self::assertSame("Internal Server Error\n", $reply->body);
        $log = (string) \file_get_contents(self::$dir . '/weft.log');
        self::assertMatchesRegularExpression('/\[fpm worker \d+\] error: GET \/boom: RuntimeException: kaboom from the fpm fixture/', $log);
        self::assertSame(200, HttpConnection::get(self::port(), '/')->status, 'the workers live on');
    }

    public function testKeepAlive(): void
    {
        $connection = new HttpConnection(self::port());
        $pids = [];
        for ($i = 0; $i < 5; $i++) {
            $reply = $connection->request('GET', '/pid');
            self::assertSame(200, $reply->status);
            self::assertNotSame('close', $reply->header('connection'));
            $pids[] = (int) $reply->body;
        }
        $reply = $connection->request('POST', '/echo', [], 'abc');
        self::assertSame(3, \json_decode($reply->body, true)['length']);
        self::assertSame('Hello World', $connection->request('GET', '/')->body);
        self::assertTrue($connection->isOpen());
        $connection->close();
        self::assertNotContains(0, $pids);
    }

    public function testStreamedResponse(): void
    {
        $reply = HttpConnection::get(self::port(), '/stream');
        self::assertSame(200, $reply->status);
        self::assertSame('chunked', $reply->header('transfer-encoding'));
        self::assertSame("one\ntwo\nthree\n", $reply->body);
        self::assertNull($reply->header('x-accel-buffering'), 'nginx consumes it');
    }

    public function testRepeatedHeadersAndACustomReason(): void
    {
        $reply = HttpConnection::get(self::port(), '/cookies');
        self::assertSame(201, $reply->status);
        self::assertSame('Made Here', $reply->reason);
        self::assertSame(['a=1', 'b=2'], $reply->headers['set-cookie']);
        self::assertSame(['x', 'y'], $reply->headers['x-multi']);
        self::assertSame('made', $reply->body);
    }

    public function testStatus(): void
    {
        HttpConnection::get(self::port(), '/');
        $status = self::serverStatus(self::$dir . '/weft.pid');
        $master = $status['master'];
        self::assertSame(self::$server->pid(), $master['pid']);
        self::assertSame('127.0.0.1:' . self::port(), $master['address']);
        self::assertSame('fpm', $master['mode']);
        self::assertSame('n/a', $master['loop']);
        self::assertSame(2, $master['workers']);
        self::assertSame('running', $master['state']);
        self::assertSame(self::$dir . '/weft.pid.fpm', $master['runtime']);
        self::assertGreaterThan(0, $master['rss']);
        self::assertGreaterThan($master['rss'], $master['total_rss']);
        self::assertTrue(\posix_kill($master['nginx']['pid'], 0));
        self::assertCount(1, $master['nginx']['workers']);
        self::assertTrue(\posix_kill($master['php_fpm']['pid'], 0));
        self::assertCount(2, $status['workers']);
        $requests = 0;
        foreach ($status['workers'] as $worker) {
            self::assertTrue(\posix_kill($worker['pid'], 0));
            self::assertContains($worker['state'], ['idle', 'busy']);
            self::assertGreaterThan(0, $worker['rss']);
            $requests += $worker['requests'];
        }
        self::assertGreaterThan(0, $requests);

        [$code, $text] = ServerProcess::run(['status', '--pid-file', self::$dir . '/weft.pid']);
        self::assertSame(0, $code);
        self::assertStringContainsString('fpm mode', $text);
    }

    /** Reload under requests: none fails, and the new workers run the app file as it is now. */
    public function testReloadLoadsTheAppAfreshWithoutFailingARequest(): void
    {
        $pidFile = self::$dir . '/weft.pid';
        self::assertSame('v1', HttpConnection::get(self::port(), '/version')->body);
        $before = \array_column(self::serverStatus($pidFile)['workers'], 'pid');
        $app = self::$dir . '/app.php';
        \file_put_contents($app, \str_replace("\$version = 'v1';", "\$version = 'v2';", (string) \file_get_contents($app)));
        self::assertSame('v1', HttpConnection::get(self::port(), '/version')->body, 'opcache does not look at the file again');

        $connections = [new HttpConnection(self::port()), new HttpConnection(self::port()), new HttpConnection(self::port())];
        [$code, $out] = ServerProcess::run(['reload', '--pid-file', $pidFile]);
        self::assertSame(0, $code, $out);
        $seen = [];
        $requests = 0;
        $deadline = \microtime(true) + 60;
        while (($seen['v2'] ?? 0) < 10 && \microtime(true) < $deadline) {
            foreach ($connections as $connection) {
                $reply = $connection->request('GET', '/version');
                self::assertSame(200, $reply->status, "request $requests during the reload: " . $reply->body);
                $seen[$reply->body] = ($seen[$reply->body] ?? 0) + 1;
                $requests++;
            }
        }
        foreach ($connections as $connection) {
            $connection->close();
        }
        self::assertGreaterThanOrEqual(10, $seen['v2'] ?? 0, 'the new workers answer with the new code');
        $after = \array_column(self::serverStatus($pidFile)['workers'], 'pid');
        self::assertSame([], \array_intersect($before, $after), 'every worker was replaced');
        self::assertSame(self::$server->pid(), self::serverStatus($pidFile)['master']['pid']);
    }
}
