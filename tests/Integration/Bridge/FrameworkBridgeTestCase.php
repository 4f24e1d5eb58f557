<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Bridge;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\Curl;
use Weft\Tests\Support\ServerProcess;

/**
 * The same checks against a real framework application (tests/Fixtures/NAME, installed with its
 * own Composer dependencies by scripts/fixtures.sh) served by a real `bin/weft serve`.
 */
abstract class FrameworkBridgeTestCase extends TestCase
{
    /** "symfony-app" or "laravel-app" */
    abstract protected static function app(): string;

    /** A fragment of the framework's own 500 page. */
    abstract protected static function errorPageMarker(): string;

    /** @var list<ServerProcess> */
    private array $servers = [];

    public static function setUpBeforeClass(): void
    {
        $root = \dirname(__DIR__, 3);
        exec('bash ' . escapeshellarg("$root/scripts/fixtures.sh") . ' ' . escapeshellarg(static::app()) . ' 2>&1', $output, $status);
        if ($status !== 0) {
            self::fail("scripts/fixtures.sh " . static::app() . " failed:\n" . implode("\n", $output));
        }
    }

    protected function tearDown(): void
    {
        foreach ($this->servers as $server) {
            $server->stop();
        }
        $this->servers = [];
    }

    /**
     * @param array<string, string> $env
     * @param list<string> $options more `bin/weft serve` options
     */
    protected function serve(array $env = [], string $mode = 'coroutine', string $entryFile = 'weft.php', array $options = []): string
    {
        $entry = \dirname(__DIR__, 3) . '/var/fixtures/' . static::app() . '/' . $entryFile;
        // A leak-warning setting inherited from the shell must not decide what a test sees.
        $env += ['WEFT_LEAK_WARNINGS' => '', 'APP_ENV' => 'production', 'APP_DEBUG' => 'false'];
        $server = new ServerProcess([$entry, '--workers', '1', '--mode', $mode, ...$options], $env);
        $this->servers[] = $server;
        return 'http://' . $server->address();
    }

    protected function serverOutput(): string
    {
        return $this->servers[0]->output();
    }

    protected function server(): ServerProcess
    {
        return $this->servers[0];
    }

    public function testRoutesBodiesHeadersAndCookies(): void
    {
        foreach (['coroutine', 'sync'] as $mode) {
            $base = $this->serve(mode: $mode);
            $hello = Curl::get("$base/");
            self::assertSame(200, $hello['status']);
            self::assertSame('Hello World', $hello['body']);
            self::assertStringStartsWith('text/plain', $hello['headers']['content-type'][0]);

            $json = Curl::get("$base/json?a=1&b[]=2");
            self::assertSame(200, $json['status']);
            self::assertSame('application/json', $json['headers']['content-type'][0]);
            self::assertSame(['a' => '1', 'b' => ['2']], json_decode($json['body'], true)['query']);

            // A body of 300 KB arrives whole (and once: its hash is the framework's own reading).
            $payload = json_encode(['items' => array_map(static fn (int $i) => "item-$i-" . str_repeat('x', 40), range(1, 6000))]);
            $post = Curl::request('POST', "$base/echo", ['Content-Type' => 'application/json'], $payload);
            self::assertSame(200, $post['status'], $post['body']);
            $echo = json_decode($post['body'], true);
            self::assertSame(\strlen($payload), $echo['length']);
            self::assertSame(sha1($payload), $echo['sha1']);
            self::assertCount(6000, $echo['data']['items']);

            $form = Curl::request('POST', "$base/echo", ['Content-Type' => 'application/x-www-form-urlencoded'], 'name=weft&tags[]=a&tags[]=b');
            self::assertSame(['name' => 'weft', 'tags' => ['a', 'b']], json_decode($form['body'], true)['data']);

            $upload = str_repeat("\x00\xffupload", 5000);
            $multipart = "--b0undary\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nreport\r\n"
                . "--b0undary\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"r.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                . $upload . "\r\n--b0undary--\r\n";
            $sent = json_decode(Curl::request('POST', "$base/echo", ['Content-Type' => 'multipart/form-data; boundary=b0undary'], $multipart)['body'], true);
            self::assertSame(['title' => 'report'], $sent['data']);
            $path = $sent['files']['doc']['path'];
            unset($sent['files']['doc']['path']);
            self::assertSame(['doc' => ['name' => 'r.bin', 'size' => \strlen($upload), 'valid' => true, 'sha1' => sha1($upload)]], $sent['files']);
            // The temporary file is gone once the request is over (its terminate work included).
            for ($deadline = microtime(true) + 5.0; is_file($path) && microtime(true) < $deadline;) {
                usleep(10_000);
            }
            self::assertFileDoesNotExist($path);

            $headers = Curl::get("$base/headers", ['X-Agent' => 'test-agent', 'Cookie' => 'flavour=mint']);
            self::assertSame(200, $headers['status']);
            self::assertSame(['42'], $headers['headers']['x-answer']);
            $cookies = implode("\n", $headers['headers']['set-cookie']);
            self::assertStringContainsString('visited=yes; path=/', $cookies);
            $seen = json_decode($headers['body'], true);
            self::assertSame('test-agent', $seen['agent']);
            self::assertSame('mint', $seen['cookie']);
            self::assertSame('127.0.0.1', $seen['host']);
            self::assertSame('127.0.0.1', $seen['client_ip']);

            self::assertSame(404, Curl::get("$base/no-such-route")['status']);
            // What the application echoes goes to the client first, as under PHP-FPM, not to the worker's stdout.
            self::assertSame('echoed returned', Curl::get("$base/echoed")['body']);
            self::assertSame('Hello World', Curl::get("$base/")['body']);
        }
    }

    public function testStreamedAndFileResponsesAreStreamed(): void
    {
        $base = $this->serve();
        $stream = Curl::get("$base/stream");
        self::assertSame(200, $stream['status']);
        self::assertSame("line 0\nline 1\nline 2\nline 3\nline 4\n", $stream['body']);
        self::assertSame(['chunked'], $stream['headers']['transfer-encoding']);

        $expected = str_repeat(implode('', array_map('chr', range(0, 255))), 1171) . str_repeat('w', 300000 - 256 * 1171);
        $file = Curl::get("$base/file");
        self::assertSame(200, $file['status']);
        self::assertSame(['300000'], $file['headers']['content-length']);
        self::assertSame(sha1($expected), sha1($file['body']));

        $range = Curl::get("$base/file", ['Range' => 'bytes=256-511']);
        self::assertSame(206, $range['status']);
        self::assertSame(['bytes 256-511/300000'], $range['headers']['content-range']);
        self::assertSame(substr($expected, 256, 256), $range['body']);
        // HEAD describes the body it does not send.
        $head = Curl::request('HEAD', "$base/file");
        self::assertSame(200, $head['status']);
        self::assertSame(['300000'], $head['headers']['content-length']);
        self::assertSame('', $head['body']);
        $headHello = Curl::request('HEAD', "$base/");
        self::assertSame(200, $headHello['status']);
        self::assertSame('', $headHello['body']);
        // And the worker is in a clean state afterwards.
        self::assertSame('Hello World', Curl::get("$base/")['body']);
    }

    /** An upload the application keeps (UploadedFile::move(), Laravel's storeAs()) is kept whole; the temporary file goes. */
    public function testAnUploadCanBeKept(): void
    {
        foreach (['coroutine', 'sync'] as $mode) {
            $base = $this->serve(mode: $mode);
            $upload = random_bytes(70_000);
            $multipart = "--b0undary\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"photo.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n"
                . $upload . "\r\n--b0undary--\r\n";
            $response = Curl::request('POST', "$base/upload", ['Content-Type' => 'multipart/form-data; boundary=b0undary'], $multipart);
            self::assertSame(200, $response['status'], "$mode: " . $response['body']);
            $kept = json_decode($response['body'], true);
            self::assertTrue($kept['valid']);
            self::assertSame(sha1($upload), $kept['sha1']);
            self::assertFileExists($kept['kept']);
            self::assertSame(sha1($upload), sha1_file($kept['kept']));
            self::assertStringEndsWith('-photo.jpg', $kept['kept']);
            @unlink($kept['kept']);
            for ($deadline = microtime(true) + 5.0; is_file($kept['temporary']) && microtime(true) < $deadline;) {
                usleep(10_000);
            }
            self::assertFileDoesNotExist($kept['temporary']);
        }
    }

    /** A file response with deleteFileAfterSend() leaves no file behind, whatever the client asked. */
    public function testAFileDeletedAfterSendIsDeletedForHeadAndRangesToo(): void
    {
        $base = $this->serve();
        $id = bin2hex(random_bytes(4));
        $requests = [
            'get' => ['GET', []], 'head' => ['HEAD', []], 'range' => ['GET', ['Range' => 'bytes=0-9']],
        ];
        foreach ($requests as $name => [$method, $headers]) {
            $path = sys_get_temp_dir() . "/weft-export-$id$name.csv";
            $response = Curl::request($method, "$base/export?id=$id$name", $headers);
            self::assertSame($name === 'range' ? 206 : 200, $response['status'], $name);
            self::assertSame($method === 'HEAD' ? '' : ($name === 'range' ? "a,b,c\na,b," : str_repeat("a,b,c\n", 1000)), $response['body'], $name);
            for ($deadline = microtime(true) + 5.0; is_file($path) && microtime(true) < $deadline;) {
                usleep(10_000);
            }
            self::assertFileDoesNotExist($path, "$name: the file is deleted after the response");
        }
    }

    public function testAClientLeavingInTheMiddleOfAStreamFreesTheWorker(): void
    {
        foreach (['coroutine', 'sync'] as $mode) {
            $base = $this->serve(mode: $mode);
            [$host, $port] = explode(':', substr($base, \strlen('http://')));
            for ($i = 0; $i < 3; $i++) {
                // A 4 KB receive buffer and a 32 MB body: the server is mid-body when we leave.
                $client = socket_create(AF_INET, SOCK_STREAM, SOL_TCP);
                socket_set_option($client, SOL_SOCKET, SO_RCVBUF, 4096);
                self::assertTrue(socket_connect($client, $host, (int) $port));
                socket_write($client, "GET /big HTTP/1.1\r\nHost: t\r\n\r\n");
                self::assertStringStartsWith('HTTP/1.1 200', (string) socket_read($client, 64));
                usleep(100_000);   // the server is now blocked on the full socket, mid-body
                socket_close($client);
            }
            // The gate was released and the reset ran: the next requests are served normally.
            self::assertSame('Hello World', Curl::get("$base/")['body']);
            self::assertSame(['count' => 2], json_decode(Curl::get("$base/counter")['body'], true));
        }
    }

    public function testWorkAfterTheResponseRunsOnceTheClientHasIt(): void
    {
        foreach (['coroutine', 'sync'] as $mode) {
            $this->workAfterTheResponse($this->serve(mode: $mode));
        }
    }

    /**
     * Work after the response that fails (a kernel.terminate listener, a terminating callback)
     * leaves the response as it was, as under PHP-FPM where it has left by then: logged, with the
     * connection kept and the worker serving on.
     */
    public function testAFailureAfterTheResponseIsLoggedNotAnswered(): void
    {
        foreach (['coroutine', 'sync'] as $mode) {
            $base = $this->serve(mode: $mode);
            foreach (['GET', 'HEAD'] as $method) {
                $response = Curl::request($method, "$base/terminate-fails");
                self::assertSame(200, $response['status'], "$mode $method");
                self::assertSame($method === 'HEAD' ? '' : 'Hello World', $response['body']);
            }
            self::assertSame('Hello World', Curl::get("$base/")['body']);
            $output = $this->waitForOutput('failed on purpose');
            self::assertMatchesRegularExpression('/\[worker \d+\] error: GET \/terminate-fails: .* failed after the response: the terminate listener failed on purpose/', $output);
            self::assertStringNotContainsString('closing the connection', $output);
            $this->tearDown();
        }
    }

    private function workAfterTheResponse(string $base): void
    {
        $id = bin2hex(random_bytes(4));
        $files = \dirname(__DIR__, 3) . '/var/fixtures/' . static::app() . '/' . static::filesDir();
        @mkdir($files, 0777, true);
        // The terminate work waits for this flag, which we create only once we have the response:
        // had it run before the response was sent, it would have timed out first.
        $response = Curl::get("$base/after-response?id=$id");
        self::assertSame('Hello World', $response['body']);
        touch("$files/flag-$id");
        $deadline = microtime(true) + 10.0;
        while (!is_file("$files/after-$id.txt") && microtime(true) < $deadline) {
            usleep(20_000);
        }
        self::assertSame('saw the flag', @file_get_contents("$files/after-$id.txt"));
        @unlink("$files/flag-$id");
        @unlink("$files/after-$id.txt");
        self::assertSame('Hello World', Curl::get("$base/")['body']);
    }

    public function testConcurrentRequestsInSyncModeWithStreamedBodies(): void
    {
        // Sync mode: the next call may come while a body is still being written; it must not wait
        // for it (the same worker writes it), and every response must still be whole.
        $base = $this->serve(mode: 'sync');
        $urls = [];
        for ($i = 0; $i < 24; $i++) {
            $urls[$i] = $base . ['/stream', '/counter', '/', '/file'][$i % 4];
        }
        foreach (Curl::getAll($urls) as $i => ['status' => $status, 'body' => $body]) {
            self::assertSame(200, $status);
            match ($i % 4) {
                0 => self::assertSame("line 0\nline 1\nline 2\nline 3\nline 4\n", $body),
                1 => self::assertSame(['count' => 2], json_decode($body, true)),
                2 => self::assertSame('Hello World', $body),
                3 => self::assertSame(300000, \strlen($body)),
            };
        }
    }

    /** Where the fixture app keeps its files (flag files of the after-response test). */
    protected static function filesDir(): string
    {
        return 'var';
    }

    public function testServiceStateIsResetBetweenRequests(): void
    {
        $base = $this->serve();
        // The counter is incremented twice per request: 2 every time means a fresh (or reset) one.
        for ($i = 0; $i < 3; $i++) {
            self::assertSame(['count' => 2], json_decode(Curl::get("$base/counter")['body'], true));
        }
        // The same under concurrency: one request at a time inside the framework, each one reset.
        foreach (Curl::getAll(array_fill(0, 12, "$base/counter")) as ['status' => $status, 'body' => $body]) {
            self::assertSame(200, $status);
            self::assertSame(['count' => 2], json_decode($body, true));
        }
    }

    /**
     * Code that reads the superglobals sees its own request, as under PHP-FPM, and what a request
     * writes into them, or the timezone and C locale it sets, is gone before the next one (in both
     * modes).
     */
    public function testSuperglobalsTimezoneAndLocaleDoNotLeak(): void
    {
        foreach (['coroutine', 'sync'] as $mode) {
            $base = $this->serve(mode: $mode);
            $multipart = "--b0undary\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nreport\r\n"
                . "--b0undary\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"r.txt\"\r\nContent-Type: text/plain\r\n\r\n"
                . "twelve bytes\r\n--b0undary--\r\n";
            $post = Curl::request('POST', "$base/globals?page=2&title=query", [
                'Content-Type' => 'multipart/form-data; boundary=b0undary',
                'Cookie' => 'flavour=mint',
            ], $multipart);
            self::assertSame(200, $post['status'], $post['body']);
            $seen = json_decode($post['body'], true);
            self::assertSame(['page' => '2', 'title' => 'query'], $seen['get'], $mode);
            self::assertSame(['title' => 'report'], $seen['post']);
            self::assertSame(['flavour' => 'mint'], $seen['cookie']);
            self::assertSame(['page' => '2', 'title' => 'report'], $seen['request'], 'request_order GP: the body wins');
            self::assertSame(['doc' => ['name' => 'r.txt', 'size' => 12, 'error' => UPLOAD_ERR_OK, 'exists' => true]], $seen['files']);
            self::assertSame('/globals?page=2&title=query', $seen['uri']);
            self::assertSame('POST', $seen['method']);
            self::assertNull($seen['leaked']);
            self::assertNotSame('Asia/Tokyo', $seen['timezone']);
            self::assertNotSame('C.UTF-8', $seen['numeric']);
            self::assertNotSame('fr_FR', $seen['intl']);

            // PHP parses a form into $_POST for POST only.
            $put = json_decode(Curl::request('PUT', "$base/globals", ['Content-Type' => 'application/x-www-form-urlencoded'], 'title=put')['body'], true);
            self::assertSame([[], [], 'PUT'], [$put['post'], $put['request'], $put['method']]);

            // The next request (same worker) sees its own values, none of what the last one wrote or set.
            $next = json_decode(Curl::get("$base/globals")['body'], true);
            self::assertSame(
                ['get' => [], 'post' => [], 'cookie' => [], 'request' => [], 'files' => [], 'uri' => '/globals', 'method' => 'GET', 'leaked' => null,
                    'timezone' => $seen['timezone'], 'numeric' => $seen['numeric'], 'intl' => $seen['intl']],
                $next,
                $mode,
            );
        }
    }

    /**
     * Sessions (Symfony's on PHP's native session_start(), Laravel's file driver): each client keeps
     * its own, a client without a cookie gets a new one, never the previous client's; and so even
     * when the application printed something outside a response (here while it boots), which under
     * the CLI SAPI would mark the headers as sent for the worker's life and make session_start()
     * throw.
     */
    public function testSessionsBelongToTheirClient(): void
    {
        $dir = \dirname(__DIR__, 3) . '/var/fixtures/' . static::app();
        file_put_contents("$dir/weft-noisy.php", "<?php\necho \"booting the application\\n\";\nreturn require __DIR__ . '/weft.php';\n");
        foreach (['coroutine', 'sync'] as $mode) {
            $base = $this->serve(['SESSION_DRIVER' => 'file'], $mode, 'weft-noisy.php');
            $alice = Curl::get("$base/session?visitor=alice");
            self::assertSame(200, $alice['status'], "$mode: " . $alice['body']);
            self::assertNull(json_decode($alice['body'], true)['before']);
            $cookie = null;
            foreach ($alice['headers']['set-cookie'] ?? [] as $line) {
                if (preg_match('/^([^=;]*sess[^=;]*=[^;]+)/i', $line, $m) === 1) {
                    $cookie = $m[1];
                }
            }
            self::assertNotNull($cookie, 'the session cookie is set: ' . json_encode($alice['headers']));
            $id = json_decode($alice['body'], true)['id'];

            // Another client, right after, on the same worker: a session of its own.
            $bob = Curl::get("$base/session?visitor=bob");
            self::assertSame(200, $bob['status'], $bob['body']);
            $seen = json_decode($bob['body'], true);
            self::assertNull($seen['before'], "$mode: a new client does not see the last client's session");
            self::assertNotSame($id, $seen['id']);

            $again = json_decode(Curl::get("$base/session", ['Cookie' => $cookie])['body'], true);
            self::assertSame(['id' => $id, 'before' => 'alice'], $again, $mode);
            self::assertStringContainsString('booting the application', $this->serverOutput(), 'what the entry file printed is in the log');
        }
    }

    /** As docs/frameworks.md serves an app: --static public answers the assets, the framework the rest, never the PHP sources. */
    public function testPublicAssetsAreServedBesideTheApplication(): void
    {
        $public = \dirname(__DIR__, 3) . '/var/fixtures/' . static::app() . '/public';
        $base = $this->serve(options: ['--static', $public]);
        $robots = Curl::get("$base/robots.txt");
        self::assertSame(200, $robots['status']);
        self::assertSame("User-agent: *\nDisallow:\n", $robots['body']);
        self::assertSame('Hello World', Curl::get("$base/")['body']);
        $script = Curl::get("$base/index.php");
        self::assertSame(404, $script['status'], 'the framework answers it, as a route it does not have');
        self::assertStringNotContainsString('require __DIR__', $script['body']);
    }

    /** State the frameworks do not reset lives at most --max-requests requests: the worker is replaced. */
    public function testMaxRequestsBoundsWhatALeakCanKeep(): void
    {
        $base = $this->serve(options: ['--max-requests', '2']);
        self::assertSame(['seen' => ['a']], json_decode(Curl::get("$base/leak?id=a")['body'], true));
        self::assertSame(['seen' => ['a', 'b']], json_decode(Curl::get("$base/leak?id=b")['body'], true));
        // A new worker, a new kernel: nothing of the two requests before.
        self::assertSame(['seen' => ['c']], json_decode(Curl::get("$base/leak?id=c")['body'], true));
    }

    /** In debug mode the framework's own exception page, with the exception; otherwise a generic one. */
    public function testDebugModeShowsTheFrameworksExceptionPage(): void
    {
        $base = $this->serve(['APP_DEBUG' => 'true']);
        $error = Curl::get("$base/fail");
        self::assertSame(500, $error['status']);
        self::assertStringStartsWith('text/html', $error['headers']['content-type'][0]);
        self::assertStringContainsString('the fixture failed on purpose', $error['body']);
        self::assertStringContainsString('RuntimeException', $error['body']);
        self::assertSame('Hello World', Curl::get("$base/")['body'], 'and the worker serves on');
    }

    public function testAnExceptionBecomesTheFrameworksErrorResponse(): void
    {
        $base = $this->serve();
        $error = Curl::get("$base/fail");
        self::assertSame(500, $error['status']);
        self::assertStringStartsWith('text/html', $error['headers']['content-type'][0]);
        self::assertStringContainsString(static::errorPageMarker(), $error['body']);
        self::assertStringNotContainsString('failed on purpose', $error['body'], 'no details outside debug mode');
        self::assertSame('Hello World', Curl::get("$base/")['body']);
        self::assertSame(['count' => 2], json_decode(Curl::get("$base/counter")['body'], true));
    }

    /**
     * exit() in a request ends it as under PHP-FPM: what it printed so far, status 200, and none of
     * the framework's error page (debug mode, where that page is the largest), with one line in
     * Weft's log; the worker serves on.
     */
    public function testExitEndsTheRequestAsUnderFpm(): void
    {
        $outcomes = $this->compareWithFpm('/exit');
        self::assertSame([200, "printed before exit\n"], $outcomes['fpm']);
        self::assertSame($outcomes['fpm'], $outcomes['coroutine']);
        self::assertMatchesRegularExpression('~\[worker \d+\] warning: GET /exit called exit\(\) at \S+:\d+: answered 200 with the 20 bytes it printed before~', $outcomes['log']);
    }

    /**
     * A fresh worker's first requests load much of the framework's code, and an error page in debug
     * mode highlights the source of every frame (~90 ms each): neither is a blocking call the
     * application could fix, so the detector (threshold 50 ms) reports neither. A real one still is.
     */
    public function testFirstHitsAndErrorPagesAreNotReportedAsBlockingCalls(): void
    {
        if (!is_file(\dirname(__DIR__, 3) . '/ext/modules/weft.so')) {
            self::markTestSkipped('the blocking-call detector needs the extension (bash scripts/build-ext.sh)');
        }
        // usleep() blocks with the sleep hook off.
        $base = $this->serve(['APP_DEBUG' => 'true'], options: ['--hooks', 'stream,dns,exit']);
        foreach (['/fail', '/json', '/no-such-route', '/counter', '/fail', '/exit', '/', '/blocks'] as $path) {
            Curl::get("$base$path");
        }
        $output = $this->waitForOutput('GET /blocks');
        self::assertMatchesRegularExpression('~A blocking call held the worker for \d+ ms \(threshold 50 ms\) in GET /blocks: (\S+\\\\)?usleep\(\) at \S+:\d+~', $output);
        // Only what a request holds counts here (on a loaded machine, the loop's own turns may lag too).
        preg_match_all('~A blocking call held the worker for \d+ ms \(threshold 50 ms\) in GET ([^:\s]+)~', $output, $m);
        self::assertSame(['/blocks'], $m[1], $output);
    }

    /**
     * The path answered under fpm mode (php-fpm behind nginx, the framework booted per request) and
     * under coroutine mode, in debug mode.
     *
     * @return array{fpm: array{int, string}, coroutine: array{int, string}, log: string} status and
     *         body of each, and the coroutine server's log
     */
    protected function compareWithFpm(string $path): array
    {
        if (!is_file(\dirname(__DIR__, 3) . '/ext/modules/weft.so')) {
            self::markTestSkipped('exit() ends only its request with the exit hook of the extension (bash scripts/build-ext.sh)');
        }
        $outcomes = [];
        foreach (['fpm', 'coroutine'] as $mode) {
            $base = $this->serve(['APP_DEBUG' => 'true'], $mode);
            $response = Curl::get("$base$path");
            $outcomes[$mode] = [$response['status'], $response['body']];
            self::assertSame('Hello World', Curl::get("$base/")['body'], "$mode: the next request is served");
            $outcomes['log'] = $this->serverOutput();
            $this->tearDown();
        }
        return $outcomes;
    }

    public function testTheSameEntryFileServesUnderFpm(): void
    {
        // Booted on every request by php-fpm: the state of one request cannot reach the next there.
        $base = $this->serve(mode: 'fpm');
        self::assertSame('Hello World', Curl::get("$base/")['body']);
        self::assertSame(['seen' => ['a']], json_decode(Curl::get("$base/leak?id=a")['body'], true));
        self::assertSame(['seen' => ['b']], json_decode(Curl::get("$base/leak?id=b")['body'], true));
        self::assertSame(500, Curl::get("$base/fail")['status']);
    }

    public function testLeakWarningNamesTheClassInDevelopment(): void
    {
        $base = $this->serve(['APP_ENV' => static::devEnvironment()]);
        $paths = ['/', '/json', '/counter', '/headers', '/stream', '/fail', '/no-such-route', '/globals', '/session?visitor=a', '/terminate-fails', ...static::moreResettingPaths()];
        foreach ($paths as $path) {
            Curl::get("$base$path");
            Curl::get("$base$path");
        }
        self::assertSame(['seen' => ['a']], json_decode(Curl::get("$base/leak?id=a")['body'], true));
        // The leak is real (the next request sees it) and named.
        self::assertSame(['seen' => ['a', 'b']], json_decode(Curl::get("$base/leak?id=b")['body'], true));
        Curl::get("$base/leak?id=c");
        Curl::get("$base/");
        $output = $this->waitForOutput('state leak');
        self::assertStringContainsString('state leak: GET /leak changed static App\Registry::$log, App\Registry->seen', $output);
        // One record of the server log, tagged with the worker (not a stderr line the master tags again).
        self::assertMatchesRegularExpression('/^\S+ \[worker \d+\] warning: state leak: GET \/leak/m', $output);
        // Reported once, and nothing else was reported: the framework's own resets are not leaks.
        self::assertSame(1, substr_count($output, 'state leak'), $output);
    }

    public function testNoLeakWarningInProduction(): void
    {
        $base = $this->serve();
        foreach (['a', 'b', 'c'] as $id) {
            Curl::get("$base/leak?id=$id");
        }
        self::assertSame('Hello World', Curl::get("$base/")['body']);
        self::assertStringNotContainsString('state leak', $this->serverOutput());
    }

    public function testLeakWarningsCanBeForcedOn(): void
    {
        $base = $this->serve(['WEFT_LEAK_WARNINGS' => '1']);
        Curl::get("$base/leak?id=a");
        Curl::get("$base/leak?id=b");
        self::assertStringContainsString('App\Registry->seen', $this->waitForOutput('state leak'));
    }

    /** Routes of one app only whose changes the bridge or the framework resets: never a leak warning. */
    protected static function moreResettingPaths(): array
    {
        return [];
    }

    protected static function devEnvironment(): string
    {
        return 'dev';
    }

    protected function waitForOutput(string $needle): string
    {
        // The warning is written after the response; give the worker's stderr a moment to arrive.
        $deadline = microtime(true) + 5.0;
        do {
            $output = $this->serverOutput();
            if (str_contains($output, $needle)) {
                return $output;
            }
            usleep(20_000);
        } while (microtime(true) < $deadline);
        return $output;
    }
}
