<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Http;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\RawWebSocket;
use Weft\Tests\Support\ServerProcess;
use Weft\WebSocket\Frame;

/** `bin/weft serve --static DIR` against curl and raw sockets. */
final class StaticFilesTest extends TestCase
{
    private const APP = __DIR__ . '/../fixtures/static-app.php';

    private static DocRoot $docRoot;
    private static ?ServerProcess $server = null;

    public static function setUpBeforeClass(): void
    {
        self::$docRoot = new DocRoot();
        self::$server = new ServerProcess([self::APP, '--workers', '1', '--static', self::$docRoot->root]);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
        self::$docRoot->remove();
    }

    private static function url(string $path): string
    {
        return 'http://' . self::$server->address() . $path;
    }

    public function testServesAFileWithTypeValidatorsAndLength(): void
    {
        $response = Curl::get(self::url('/hello.txt'));
        self::assertSame(200, $response['status']);
        self::assertSame("Hello, static world\n", $response['body']);
        self::assertSame('text/plain; charset=utf-8', $response['headers']['content-type']);
        self::assertSame('20', $response['headers']['content-length']);
        self::assertSame('bytes', $response['headers']['accept-ranges']);
        $mtime = \filemtime(self::$docRoot->path('hello.txt'));
        self::assertSame(\gmdate('D, d M Y H:i:s', $mtime) . ' GMT', $response['headers']['last-modified']);
        self::assertSame('"' . \dechex($mtime) . '-14"', $response['headers']['etag']);

        self::assertSame('text/css; charset=utf-8', Curl::get(self::url('/style.css'), ['--header', 'Accept-Encoding: identity'])['headers']['content-type']);
        self::assertSame('image/jpeg', Curl::get(self::url('/photo.jpg'))['headers']['content-type']);
        self::assertSame('application/octet-stream', Curl::get(self::url('/bytes.bin'))['headers']['content-type']);
        $empty = Curl::get(self::url('/empty.txt'));
        self::assertSame([200, '0', ''], [$empty['status'], $empty['headers']['content-length'], $empty['body']]);
    }

    public function testUnknownPathsAndOtherMethodsReachTheApplication(): void
    {
        $missing = RawHttp::get(self::$server->address(), '/nothing-here.txt');
        self::assertSame([404, 'yes', 'app: GET /nothing-here.txt'], [$missing['status'], $missing['headers']['x-app'], $missing['body']]);

        $client = new RawHttp(self::$server->address());
        $post = $client->send("POST /hello.txt HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nhi")->response();
        self::assertSame('app: POST /hello.txt', $post['body']);
        $client->close();
    }

    public function testAWebSocketHandshakeReachesTheApplicationEvenWhereAFileAnswers(): void
    {
        // A page at "/" (index.html) opening `new WebSocket('ws://' + location.host + '/')`, as a browser
        // sends it (compression accepted too): the upgrade is the application's, not index.html's.
        foreach (['/', '/hello.txt'] as $path) {
            $ws = new RawWebSocket(self::$server->address(), $path, ['Accept-Encoding' => 'gzip, deflate, br', 'Origin' => 'http://' . self::$server->address()]);
            self::assertSame(101, $ws->status(), $ws->responseHead);
            $ws->sendText('through the document root');
            self::assertSame([Frame::TEXT, 'through the document root'], \array_slice($ws->read() ?? [], 0, 2));
            $ws->close();
        }
        // A plain GET of the same path still gets the file.
        self::assertSame("<!doctype html><title>home</title>\n", Curl::get(self::url('/'))['body']);
    }

    public function testDirectoriesServeTheirIndexAndRedirectWithoutTheSlash(): void
    {
        self::assertSame("<!doctype html><title>home</title>\n", Curl::get(self::url('/'))['body']);
        self::assertSame("<p>sub index</p>\n", Curl::get(self::url('/sub/'))['body']);
        $redirect = RawHttp::get(self::$server->address(), '/sub?x=1');
        self::assertSame(301, $redirect['status']);
        self::assertSame('/sub/?x=1', $redirect['headers']['location']);
        // A doubled slash cannot turn the redirect into a protocol-relative one (an open redirect).
        self::assertSame('/sub/', RawHttp::get(self::$server->address(), '//sub')['headers']['location']);
        self::assertSame("<p>sub index</p>\n", Curl::get(self::url('/sub'), ['--location'])['body']);
        // A directory without an index is not listed: it goes to the application.
        self::assertSame('app: GET /.git/', RawHttp::get(self::$server->address(), '/.git/')['body']);
    }

    /** @return iterable<string, array{string}> */
    public static function escapes(): iterable
    {
        yield 'dot-dot' => ['/../secret.txt'];
        yield 'dot-dot deeper' => ['/sub/../../secret.txt'];
        yield 'encoded dot-dot' => ['/%2e%2e/secret.txt'];
        yield 'upper-case encoded dot-dot' => ['/%2E%2E/secret.txt'];
        yield 'mixed dot-dot' => ['/.%2e/secret.txt'];
        yield 'encoded slash' => ['/sub/..%2f..%2fsecret.txt'];
        yield 'fully encoded' => ['/%2e%2e%2f%2e%2e%2fsecret.txt'];
        yield 'double-encoded' => ['/%252e%252e/secret.txt'];
        yield 'encoded backslash' => ['/..%5csecret.txt'];
        yield 'raw backslash' => ['/..\\secret.txt'];
        yield 'encoded NUL' => ['/hello.txt%00.html'];
        yield 'encoded NUL in dot-dot' => ['/%00/../secret.txt'];
        yield 'symlink to a file outside' => ['/link-out.txt'];
        yield 'symlink to a directory outside' => ['/dir-out/secret.txt'];
        yield 'dotfile' => ['/.env'];
        yield 'encoded dotfile' => ['/%2eenv'];
        yield 'inside a dot directory' => ['/.git/config'];
        yield 'symlink to a dotfile' => ['/link-to-dotenv'];
        yield 'inside a symlink to a dot directory' => ['/git-dir/config'];
        yield 'a PHP source' => ['/config.php'];
        yield 'a PHP source, encoded' => ['/config%2ephp'];
        yield 'a PHP template source' => ['/sub/legacy.phtml'];
        yield 'absolute path' => ['//etc/passwd'];
        yield 'a file as a directory' => ['/hello.txt/'];
    }

    #[DataProvider('escapes')]
    public function testNoPathLeavesTheRootOrShowsHiddenFiles(string $target): void
    {
        $client = new RawHttp(self::$server->address());
        $client->send("GET $target HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
        $raw = $client->rest();
        $client->close();
        self::assertStringNotContainsString('TOP SECRET', $raw);
        self::assertStringNotContainsString('hunter2', $raw);
        self::assertStringNotContainsString('root:', $raw);
        self::assertStringNotContainsString('[core]', $raw);
        // Either the parser refused the target outright, or the document root did not map it and
        // the request went on to the application.
        self::assertMatchesRegularExpression('#\AHTTP/1\.1 (400 |404 [\s\S]*X-App: yes)#', $raw);
    }

    public function testCurlWithPathAsIsCannotEscapeEither(): void
    {
        foreach (['/../secret.txt', '/sub/../../secret.txt', '/%2e%2e/secret.txt'] as $path) {
            $result = Curl::run(['--path-as-is', self::url($path)]);
            self::assertSame(0, $result['code'], $result['err']);
            self::assertStringNotContainsString('TOP SECRET', $result['out']);
        }
    }

    public function testDecodingHappensOnceAndSymlinksInsideTheRootWork(): void
    {
        // "%252e%252e" decodes once to the literal name "%2e%2e", a file in the root, never "..".
        self::assertSame("a file literally named %2e%2e\n", Curl::get(self::url('/%252e%252e'))['body']);
        self::assertSame("Hello, static world\n", Curl::get(self::url('/link-in.txt'))['body']);
        self::assertSame("Hello, static world\n", Curl::get(self::url('/hell%6f.txt'))['body']);
    }

    public function testConditionalRequests(): void
    {
        $first = Curl::get(self::url('/hello.txt'));
        $etag = $first['headers']['etag'];
        $lastModified = $first['headers']['last-modified'];

        $client = new RawHttp(self::$server->address());
        $notModified = $client->send("GET /hello.txt HTTP/1.1\r\nHost: t\r\nIf-None-Match: \"other\", $etag\r\n\r\n")->response();
        self::assertSame(304, $notModified['status']);
        self::assertSame($etag, $notModified['headers']['etag']);
        self::assertSame('', $notModified['body']);
        // The connection is still in step: the next response on it is the right one.
        $weak = $client->send("GET /hello.txt HTTP/1.1\r\nHost: t\r\nIf-None-Match: W/$etag\r\n\r\n")->response();
        self::assertSame(304, $weak['status'], 'If-None-Match compares weakly');
        $since = $client->send("GET /hello.txt HTTP/1.1\r\nHost: t\r\nIf-Modified-Since: $lastModified\r\n\r\n")->response();
        self::assertSame(304, $since['status']);
        $older = $client->send("GET /hello.txt HTTP/1.1\r\nHost: t\r\nIf-Modified-Since: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n")->response();
        self::assertSame([200, "Hello, static world\n"], [$older['status'], $older['body']]);
        $precedence = $client->send("GET /hello.txt HTTP/1.1\r\nHost: t\r\nIf-None-Match: \"stale\"\r\nIf-Modified-Since: $lastModified\r\n\r\n")->response();
        self::assertSame(200, $precedence['status'], 'If-None-Match takes precedence over If-Modified-Since');
        $garbage = $client->send("GET /hello.txt HTTP/1.1\r\nHost: t\r\nIf-Modified-Since: tomorrow\r\n\r\n")->response();
        self::assertSame(200, $garbage['status'], 'an invalid date is ignored');
        $ifMatch = $client->send("GET /hello.txt HTTP/1.1\r\nHost: t\r\nIf-Match: \"stale\"\r\n\r\n")->response();
        self::assertSame(412, $ifMatch['status']);
        $head = $client->send("HEAD /hello.txt HTTP/1.1\r\nHost: t\r\nIf-None-Match: $etag\r\n\r\n");
        self::assertSame(304, $head->response()['status']);
        $client->close();

        // curl's own conditional GET (-z sends If-Modified-Since).
        $result = Curl::run(['--write-out', '%{http_code}', '--time-cond', self::$docRoot->path('hello.txt'), self::url('/hello.txt')]);
        self::assertSame('304', $result['out']);
    }

    public function testRanges(): void
    {
        $bytes = (string) \file_get_contents(self::$docRoot->path('bytes.bin'));
        $size = \strlen($bytes);

        $first = Curl::get(self::url('/bytes.bin'), ['--range', '0-99']);
        self::assertSame(206, $first['status']);
        self::assertSame("bytes 0-99/$size", $first['headers']['content-range']);
        self::assertSame(\substr($bytes, 0, 100), $first['body']);

        $suffix = Curl::get(self::url('/bytes.bin'), ['--header', 'Range: bytes=-500']);
        self::assertSame([206, 'bytes ' . ($size - 500) . '-' . ($size - 1) . "/$size"], [$suffix['status'], $suffix['headers']['content-range']]);
        self::assertSame(\substr($bytes, -500), $suffix['body']);

        $open = Curl::get(self::url('/bytes.bin'), ['--range', '9000-']);
        self::assertSame(\substr($bytes, 9000), $open['body']);
        $clamped = Curl::get(self::url('/bytes.bin'), ['--range', '9990-20000']);
        self::assertSame(["bytes 9990-9999/$size", \substr($bytes, 9990)], [$clamped['headers']['content-range'], $clamped['body']]);
        $largerThanFile = Curl::get(self::url('/bytes.bin'), ['--header', 'Range: bytes=-99999']);
        self::assertSame([206, $bytes], [$largerThanFile['status'], $largerThanFile['body']]);

        foreach (['bytes=10000-', 'bytes=20000-30000', 'bytes=-0'] as $range) {
            $unsatisfiable = RawHttp::get(self::$server->address(), '/bytes.bin', ['Range' => $range]);
            self::assertSame(416, $unsatisfiable['status'], $range);
            self::assertSame("bytes */$size", $unsatisfiable['headers']['content-range'], $range);
        }
        self::assertSame(416, RawHttp::get(self::$server->address(), '/empty.txt', ['Range' => 'bytes=0-'])['status']);

        // Several ranges: one multipart/byteranges body, parts in the order asked.
        $multi = Curl::get(self::url('/bytes.bin'), ['--range', '5000-5099,0-9,-5']);
        self::assertSame(206, $multi['status']);
        self::assertSame([[5000, 5099], [0, 9], [$size - 5, $size - 1]], self::assertByteranges($multi, $bytes, 'application/octet-stream'));
        self::assertSame((string) \strlen($multi['body']), $multi['headers']['content-length']);
        // Only the satisfiable ranges count: one left is a plain 206, none left a 416.
        $oneLeft = RawHttp::get(self::$server->address(), '/bytes.bin', ['Range' => 'bytes=0-9, 20000-']);
        self::assertSame([206, "bytes 0-9/$size", \substr($bytes, 0, 10)], [$oneLeft['status'], $oneLeft['headers']['content-range'], $oneLeft['body']]);
        $noneLeft = RawHttp::get(self::$server->address(), '/bytes.bin', ['Range' => 'bytes=20000-,30000-30001']);
        self::assertSame([416, "bytes */$size"], [$noneLeft['status'], $noneLeft['headers']['content-range']]);

        // Overlapping ranges (more than the file), malformed or foreign units, a stale If-Range, or
        // HEAD: the whole file, 200.
        foreach ([['Range' => 'bytes=0-,1-'], ['Range' => 'bytes=0-1,x'], ['Range' => 'bytes=5-1'], ['Range' => 'items=0-1'], ['Range' => 'bytes=0-1', 'If-Range' => '"stale"']] as $headers) {
            $whole = RawHttp::get(self::$server->address(), '/bytes.bin', $headers);
            self::assertSame([200, $bytes], [$whole['status'], $whole['body']], \json_encode($headers));
            self::assertArrayNotHasKey('content-range', $whole['headers']);
        }
        $etag = $first['headers']['etag'];
        $current = RawHttp::get(self::$server->address(), '/bytes.bin', ['Range' => 'bytes=0-9', 'If-Range' => $etag]);
        self::assertSame([206, \substr($bytes, 0, 10)], [$current['status'], $current['body']]);
    }

    public function testSeveralRangesOfAStreamedFile(): void
    {
        $bytes = (string) \file_get_contents(self::$docRoot->path('large.txt'));
        $size = \strlen($bytes);
        // Above the buffer limit: the parts are streamed behind an exact Content-Length.
        $multi = Curl::get(self::url('/large.txt'), ['--range', '100-70099,2000000-2000099,-10', '--header', 'Accept-Encoding: gzip']);
        self::assertSame(206, $multi['status']);
        self::assertArrayNotHasKey('content-encoding', $multi['headers'], 'ranges are never compressed');
        self::assertSame([[100, 70099], [2000000, 2000099], [$size - 10, $size - 1]], self::assertByteranges($multi, $bytes, 'text/plain; charset=utf-8'));
        self::assertSame((string) \strlen($multi['body']), $multi['headers']['content-length']);
    }

    /**
     * Checks a multipart/byteranges response part by part against the file's bytes.
     *
     * @param array{headers: array<string, string>, body: string} $response
     * @param string $type the file's Content-Type, repeated in every part
     * @return list<array{int, int}> the ranges of the parts, in order
     */
    private static function assertByteranges(array $response, string $bytes, string $type): array
    {
        self::assertSame(1, \preg_match('#\Amultipart/byteranges; boundary=([0-9A-Za-z]+)\z#', $response['headers']['content-type'], $m), $response['headers']['content-type']);
        $body = $response['body'];
        self::assertStringEndsWith("\r\n--{$m[1]}--\r\n", $body);
        $parts = \explode("--{$m[1]}\r\n", \substr($body, 0, -\strlen("\r\n--{$m[1]}--\r\n")));
        self::assertSame('', \array_shift($parts), 'nothing before the first boundary');
        $ranges = [];
        foreach ($parts as $i => $part) {
            [$head, $content] = \explode("\r\n\r\n", $part, 2);
            if ($i < \count($parts) - 1) {
                self::assertStringEndsWith("\r\n", $content);
                $content = \substr($content, 0, -2);
            }
            self::assertSame(1, \preg_match('#Content-Range: bytes (\d+)-(\d+)/' . \strlen($bytes) . '\r?$#m', $head, $r), $head);
            self::assertStringStartsWith("Content-Type: $type\r\n", $head);
            self::assertSame(\substr($bytes, (int) $r[1], (int) $r[2] - (int) $r[1] + 1), $content, "part $i");
            $ranges[] = [(int) $r[1], (int) $r[2]];
        }
        return $ranges;
    }

    public function testHeadDescribesTheBodyWithoutSendingIt(): void
    {
        $client = new RawHttp(self::$server->address());
        $client->send("HEAD /large.txt HTTP/1.1\r\nHost: t\r\nRange: bytes=0-9\r\n\r\nGET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
        $raw = $client->rest();
        $client->close();
        [$head, $rest] = \explode("\r\n\r\n", $raw, 2);
        self::assertStringStartsWith('HTTP/1.1 200 OK', $head, 'Range is ignored for HEAD');
        self::assertStringContainsString('Content-Length: ' . \filesize(self::$docRoot->path('large.txt')), $head);
        // Nothing of the file follows the head: the next bytes are the pipelined GET's response.
        self::assertStringStartsWith('HTTP/1.1 200 OK', $rest);
        self::assertStringEndsWith("\r\n\r\nHello, static world\n", $rest);
    }

    public function testAStreamedFileArrivesWhole(): void
    {
        $file = self::$docRoot->path('large.txt');
        $result = Curl::run(['--header', 'Accept-Encoding: identity', self::url('/large.txt')]);
        self::assertSame(0, $result['code'], $result['err']);
        self::assertSame(\filesize($file), \strlen($result['out']));
        self::assertSame(\md5_file($file), \md5($result['out']));
        // Ranges of a streamed file start at the right offset.
        $range = Curl::get(self::url('/large.txt'), ['--range', '100000-300000']);
        self::assertSame(\file_get_contents($file, false, null, 100000, 200001), $range['body']);
    }

    public function testSyncModeStreamsFilesToo(): void
    {
        $sync = new ServerProcess([self::APP, '--workers', '1', '--mode', 'sync', '--loop', 'select', '--static', self::$docRoot->root]);
        $file = self::$docRoot->path('large.txt');
        $whole = Curl::get('http://' . $sync->address() . '/large.txt');
        self::assertSame(\md5_file($file), \md5($whole['body']));
        $compressed = Curl::get('http://' . $sync->address() . '/large.txt', ['--compressed']);
        self::assertSame('gzip', $compressed['headers']['content-encoding']);
        self::assertSame($whole['body'], $compressed['body']);
        self::assertSame(304, RawHttp::get($sync->address(), '/large.txt', ['If-None-Match' => $whole['headers']['etag']])['status']);
        $sync->stop();
    }

    public function testTheExampleSiteWrapsItsOwnHandler(): void
    {
        $examples = \dirname(__DIR__, 3) . '/examples';
        $site = new ServerProcess([$examples . '/static-site.php', '--workers', '1']);
        $url = 'http://' . $site->address();
        self::assertSame(\file_get_contents($examples . '/public/index.html'), Curl::get($url . '/')['body']);
        self::assertSame('text/css; charset=utf-8', Curl::get($url . '/style.css')['headers']['content-type']);
        self::assertArrayHasKey('time', \json_decode(Curl::get($url . '/api/time')['body'], true));
        self::assertSame(404, Curl::get($url . '/nothing')['status']);
        $escape = Curl::run(['--path-as-is', $url . '/../static-site.php']);
        self::assertStringNotContainsString('StaticFiles', $escape['out']);
        $site->stop();
    }

    public function testOptionsLetSymlinksOutAndDotfilesThrough(): void
    {
        $open = new ServerProcess([self::APP, '--workers', '1', '--static', self::$docRoot->root, '--static-symlinks', '--static-dotfiles']);
        self::assertSame(DocRoot::SECRET, RawHttp::get($open->address(), '/link-out.txt')['body']);
        self::assertSame(DocRoot::SECRET, RawHttp::get($open->address(), '/dir-out/secret.txt')['body']);
        self::assertSame("DB_PASSWORD=hunter2\n", RawHttp::get($open->address(), '/.env')['body']);
        // Still never "..": the options widen what the root may link to, not what a path may say (and
        // the parser refuses a path above the root before the document root sees it).
        self::assertSame(400, RawHttp::get($open->address(), '/../secret.txt')['status']);
        self::assertSame(400, RawHttp::get($open->address(), '/%2e%2e/secret.txt')['status']);
        $open->stop();
    }

    public function testAPsr15ApplicationBehindTheDocumentRoot(): void
    {
        $psr = new ServerProcess([__DIR__ . '/../fixtures/psr15.php', '--workers', '1', '--static', self::$docRoot->root]);
        self::assertSame("Hello, static world\n", RawHttp::get($psr->address(), '/hello.txt')['body']);
        $app = RawHttp::get($psr->address(), '/items?page=2');
        self::assertSame([201, 'yes'], [$app['status'], $app['headers']['x-psr']]);
        self::assertSame('/items', \json_decode($app['body'], true)['path']);
        $psr->stop();
    }
}
