<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Http;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\ServerProcess;

/** gzip negotiation and on-the-fly compression of a real `bin/weft serve`, with curl and raw sockets. */
final class GzipTest extends TestCase
{
    private const APP = __DIR__ . '/../fixtures/static-app.php';

    private static DocRoot $docRoot;
    private static ?ServerProcess $server = null;

    public static function setUpBeforeClass(): void
    {
        self::$docRoot = new DocRoot();
        // --gzip is on by default: no option needed.
        self::$server = new ServerProcess([self::APP, '--workers', '1', '--static', self::$docRoot->root]);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
        self::$docRoot->remove();
    }

    private static function dechunk(string $body): string
    {
        $out = '';
        while (($eol = \strpos($body, "\r\n")) !== false && ($size = (int) \hexdec(\substr($body, 0, $eol))) > 0) {
            $out .= \substr($body, $eol + 2, $size);
            $body = \substr($body, $eol + 2 + $size + 2);
        }
        return $out;
    }

    private static function get(string $target, array $headers = []): array
    {
        return RawHttp::get(self::$server->address(), $target, $headers);
    }

    public function testCompressesWhatTheClientAcceptsAndTheBytesDecodeToTheIdentityBody(): void
    {
        foreach (['/app/json', '/data.json', '/style.css', '/app/stream', '/large.txt'] as $target) {
            $identity = self::get($target);
            $gzip = self::get($target, ['Accept-Encoding' => 'gzip, deflate, br']);
            self::assertArrayNotHasKey('content-encoding', $identity['headers'], $target);
            self::assertSame('Accept-Encoding', $identity['headers']['vary'], $target);
            self::assertSame('gzip', $gzip['headers']['content-encoding'] ?? null, $target);
            self::assertSame('Accept-Encoding', $gzip['headers']['vary'], $target);
            self::assertArrayNotHasKey('accept-ranges', $gzip['headers'], $target);
            self::assertLessThan(\strlen($identity['body']) / 2, \strlen($gzip['body']), $target);
            self::assertSame($identity['body'], \gzdecode($gzip['body']), $target);
        }
        // A streamed file is compressed as it streams: chunked, no Content-Length.
        $streamed = self::get('/large.txt', ['Accept-Encoding' => 'gzip']);
        self::assertSame('chunked', $streamed['headers']['transfer-encoding']);
        self::assertArrayNotHasKey('content-length', $streamed['headers']);
        self::assertSame(\file_get_contents(self::$docRoot->path('large.txt')), \gzdecode($streamed['body']));
    }

    public function testCurlCompressedGetsByteIdenticalBodies(): void
    {
        foreach (['/data.json', '/large.txt', '/app/json', '/app/stream'] as $target) {
            $url = 'http://' . self::$server->address() . $target;
            $plain = Curl::get($url);
            $compressed = Curl::get($url, ['--compressed']);
            self::assertSame('gzip', $compressed['headers']['content-encoding'] ?? null, $target);
            self::assertSame($plain['body'], $compressed['body'], $target);
        }
    }

    /** @return iterable<string, array{string, bool}> */
    public static function acceptEncodings(): iterable
    {
        yield 'gzip' => ['gzip', true];
        yield 'x-gzip' => ['x-gzip', true];
        yield 'upper case with q' => ['GZIP;Q=0.5', true];
        yield 'any' => ['*', true];
        yield 'gzip refused' => ['gzip;q=0', false];
        yield 'gzip refused, any allowed' => ['gzip;q=0, *', false];
        yield 'any refused' => ['*;q=0', false];
        yield 'any refused, gzip allowed' => ['*;q=0, gzip;q=0.001', true];
        yield 'q zero with decimals' => ['gzip;q=0.000', false];
        yield 'others only' => ['br, deflate, identity', false];
        yield 'empty' => ['', false];
        yield 'malformed q' => ['gzip;q=high', false];
        yield 'spaces' => [' br ;q=1 ,  gzip ; q=0.8 ', true];
        yield 'spaces around =, refused' => ['gzip ; q = 0', false];
        yield 'spaces around =, accepted' => ['gzip;q =0.5', true];
    }

    #[DataProvider('acceptEncodings')]
    public function testAcceptEncodingNegotiation(string $acceptEncoding, bool $gzip): void
    {
        $response = self::get('/app/json', ['Accept-Encoding' => $acceptEncoding]);
        self::assertSame(200, $response['status']);
        self::assertSame($gzip ? 'gzip' : null, $response['headers']['content-encoding'] ?? null);
        self::assertSame('Accept-Encoding', $response['headers']['vary']);
        $body = $gzip ? \gzdecode($response['body']) : $response['body'];
        self::assertCount(120, \json_decode($body, true));
    }

    public function testWhatIsNeverCompressed(): void
    {
        $accept = ['Accept-Encoding' => 'gzip'];
        // Below the threshold, already compressed types, an existing Content-Encoding, no-transform.
        foreach (['/app/small', '/app/png', '/photo.jpg', '/app/encoded', '/app/no-transform', '/hello.txt'] as $target) {
            $response = self::get($target, $accept);
            self::assertSame(200, $response['status'], $target);
            self::assertNotSame('gzip', $response['headers']['content-encoding'] ?? null, $target);
            self::assertArrayNotHasKey('vary', $response['headers'], $target);
        }
        self::assertSame('br', self::get('/app/encoded', $accept)['headers']['content-encoding']);
        self::assertSame(204, self::get('/app/empty', $accept)['status']);

        // A range is sent as identity bytes of the file, with its strong validator.
        $range = self::get('/large.txt', $accept + ['Range' => 'bytes=0-99']);
        self::assertSame(206, $range['status']);
        self::assertArrayNotHasKey('content-encoding', $range['headers']);
        self::assertSame(\file_get_contents(self::$docRoot->path('large.txt'), false, null, 0, 100), $range['body']);
        self::assertStringStartsNotWith('W/', $range['headers']['etag']);
    }

    public function testCompressingABigFileLeavesTheWorkerFreeToAnswerOthers(): void
    {
        // 24 MB that compress to ~100 KB: the client never makes the producer wait for room, so only
        // the gzip layer's own turns let the worker's one loop answer anyone else meanwhile.
        $file = self::$docRoot->root . '/repetitive.txt';
        \file_put_contents($file, \str_repeat("a line of a large text file, compressed as it streams\n", 450_000));
        try {
            $download = \stream_socket_client('tcp://' . self::$server->address(), $errno, $error, 5);
            \fwrite($download, "GET /repetitive.txt HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n");
            $other = \stream_socket_client('tcp://' . self::$server->address(), $errno, $error, 5);
            \fwrite($other, "GET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
            \stream_set_blocking($download, false);
            \stream_set_blocking($other, false);
            $downloaded = '';
            $answer = '';
            $deadline = \microtime(true) + 30;
            while (!\feof($other) && \microtime(true) < $deadline) {
                $read = [$download, $other];
                $w = $e = null;
                \stream_select($read, $w, $e, 1);
                // All of the download that arrived before the other answer is taken first.
                while (($chunk = \fread($download, 1 << 20)) !== false && $chunk !== '') {
                    $downloaded .= $chunk;
                }
                $answer .= (string) \fread($other, 65536);
            }
            self::assertStringEndsWith("\r\n\r\nHello, static world\n", $answer);
            self::assertFalse(\str_ends_with($downloaded, "\r\n0\r\n\r\n"), 'the other request was answered only once the whole file was compressed');
            \stream_set_blocking($download, true);
            $downloaded .= \stream_get_contents($download);
            [, $body] = \explode("\r\n\r\n", $downloaded, 2);
            self::assertSame(\file_get_contents($file), \gzdecode(self::dechunk($body)));
        } finally {
            @\unlink($file);
        }
    }

    public function testARangeOfACompressibleFileSaysVaryToo(): void
    {
        // The 206 is a part of a representation that varies: with gzip asked for or not.
        foreach ([[], ['Accept-Encoding' => 'gzip']] as $accept) {
            foreach (['/large.txt', '/data.json'] as $target) {
                $range = self::get($target, $accept + ['Range' => 'bytes=0-99']);
                self::assertSame(206, $range['status'], $target);
                self::assertArrayNotHasKey('content-encoding', $range['headers'], $target);
                self::assertSame('Accept-Encoding', $range['headers']['vary'] ?? null, $target);
            }
        }
        // Not for what is never compressed.
        $range = self::get('/photo.jpg', ['Accept-Encoding' => 'gzip', 'Range' => 'bytes=0-99']);
        self::assertSame(206, $range['status']);
        self::assertArrayNotHasKey('vary', $range['headers']);
    }

    public function testValidatorsOfTheCompressedVariant(): void
    {
        $accept = ['Accept-Encoding' => 'gzip'];
        $identity = self::get('/data.json');
        $gzip = self::get('/data.json', $accept);
        self::assertSame('W/' . $identity['headers']['etag'], $gzip['headers']['etag'], 'the gzip variant has a weak ETag');
        self::assertSame('W/"json-v1"', self::get('/app/json', $accept)['headers']['etag']);
        // The weak tag the client cached revalidates (If-None-Match compares weakly): a 304, no body.
        $client = new RawHttp(self::$server->address());
        $notModified = $client->send("GET /data.json HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\nIf-None-Match: {$gzip['headers']['etag']}\r\n\r\n")->response();
        self::assertSame(304, $notModified['status']);
        self::assertSame('', $notModified['body']);
        self::assertSame($gzip['headers']['etag'], $notModified['headers']['etag'], 'the 304 names the variant the client holds');
        self::assertSame('Accept-Encoding', $notModified['headers']['vary']);
        $identity304 = $client->send("GET /data.json HTTP/1.1\r\nHost: t\r\nIf-None-Match: {$identity['headers']['etag']}\r\n\r\n")->response();
        self::assertSame([304, $identity['headers']['etag']], [$identity304['status'], $identity304['headers']['etag']]);
        $next = $client->send("GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n")->response();
        self::assertSame("Hello, static world\n", $next['body'], 'the connection is still in step after the 304');
        $client->close();
    }

    public function testHeadGetsTheHeadOfTheCompressedGetWithoutABody(): void
    {
        $client = new RawHttp(self::$server->address());
        $client->send("HEAD /data.json HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\n\r\nGET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
        $raw = $client->rest();
        $client->close();
        [$head, $rest] = \explode("\r\n\r\n", $raw, 2);
        self::assertStringStartsWith('HTTP/1.1 200 OK', $head);
        self::assertStringContainsString("\r\nContent-Encoding: gzip", $head);
        self::assertStringContainsString("\r\nVary: Accept-Encoding", $head);
        self::assertStringNotContainsString('Content-Length', $head);
        self::assertStringNotContainsString('Transfer-Encoding', $head);
        self::assertStringStartsWith('HTTP/1.1 200 OK', $rest);
        self::assertStringEndsWith("\r\n\r\nHello, static world\n", $rest);
    }

    public function testHeadOfAnApplicationsAnswerHasTheCompressedGetsLength(): void
    {
        $get = self::get('/app/json', ['Accept-Encoding' => 'gzip']);
        self::assertSame('gzip', $get['headers']['content-encoding']);
        $client = new RawHttp(self::$server->address());
        $client->send("HEAD /app/json HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\n\r\nGET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
        $raw = $client->rest();
        $client->close();
        [$head, $rest] = \explode("\r\n\r\n", $raw, 2);
        self::assertStringStartsWith('HTTP/1.1 200 OK', $head);
        self::assertStringContainsString("\r\nContent-Encoding: gzip", $head);
        self::assertStringContainsString("\r\nContent-Length: " . \strlen($get['body']) . "\r\n", $head . "\r\n");
        // No body follows the head: the next bytes are the pipelined GET's answer.
        self::assertStringStartsWith('HTTP/1.1 200 OK', $rest);
        self::assertStringEndsWith("\r\n\r\nHello, static world\n", $rest);
    }

    public function testStreamedChunksAreDecodableAsTheyArrive(): void
    {
        $flag = self::$docRoot->base . '/events-flag';
        $client = new RawHttp(self::$server->address());
        $client->send("GET /app/events?flag=" . \rawurlencode($flag) . " HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n");
        $head = '';
        while (!\str_contains($head, "\r\n\r\n")) {
            $byte = \fread($client->socket, 1);
            self::assertNotSame('', $byte, 'the head never came');
            $head .= $byte;
        }
        self::assertStringContainsString("Content-Encoding: gzip\r\n", $head);
        self::assertStringContainsString("Transfer-Encoding: chunked\r\n", $head);

        // The handler now waits for the flag file: everything decodable has to be here already.
        $inflate = \inflate_init(\ZLIB_ENCODING_GZIP);
        $decoded = '';
        while (!\str_contains($decoded, "data: first event\n\n")) {
            $size = \hexdec(\trim((string) \fgets($client->socket)));
            self::assertGreaterThan(0, $size, 'the body ended before the first event was decodable');
            $decoded .= \inflate_add($inflate, (string) \fread($client->socket, (int) $size), \ZLIB_SYNC_FLUSH);
            \fgets($client->socket);
        }
        self::assertSame("data: first event\n\n", $decoded);
        \touch($flag);
        while (($size = \hexdec(\trim((string) \fgets($client->socket)))) > 0) {
            $decoded .= \inflate_add($inflate, (string) \fread($client->socket, (int) $size), \ZLIB_SYNC_FLUSH);
            \fgets($client->socket);
        }
        $client->close();
        self::assertSame("data: first event\n\ndata: second event\n\n", $decoded);
        self::assertSame(\ZLIB_STREAM_END, \inflate_get_status($inflate), 'the gzip stream ends with its trailer');
    }

    public function testAPrecompressedSiblingIsServedAsNginxGzipStaticDoes(): void
    {
        $root = self::$docRoot->root;
        $identity = \str_repeat("precompressed elsewhere, once, at the highest level\n", 200);
        \file_put_contents("$root/pre.txt", $identity);
        // Decodes to the same text, but not byte for byte what Weft would make: served as it is.
        \file_put_contents("$root/pre.txt.gz", \gzencode($identity, 9, \FORCE_GZIP));
        \file_put_contents("$root/pre.txt.br", 'pretend these are brotli bytes');
        \touch("$root/pre.txt", \time() - 10);
        try {
            $gz = self::get('/pre.txt', ['Accept-Encoding' => 'gzip, deflate']);
            self::assertSame(200, $gz['status']);
            self::assertSame(\file_get_contents("$root/pre.txt.gz"), $gz['body'], 'the .gz file as it is on disk');
            self::assertSame('gzip', $gz['headers']['content-encoding']);
            self::assertSame((string) \filesize("$root/pre.txt.gz"), $gz['headers']['content-length']);
            self::assertSame('text/plain; charset=utf-8', $gz['headers']['content-type']);
            self::assertSame('Accept-Encoding', $gz['headers']['vary']);
            self::assertArrayNotHasKey('accept-ranges', $gz['headers']);
            self::assertArrayNotHasKey('transfer-encoding', $gz['headers']);

            $plain = self::get('/pre.txt');
            self::assertSame($identity, $plain['body']);
            self::assertSame('Accept-Encoding', $plain['headers']['vary']);
            self::assertSame('bytes', $plain['headers']['accept-ranges']);
            self::assertStringStartsNotWith('W/', $gz['headers']['etag'], 'the sibling\'s bytes are fixed: a strong tag');
            self::assertNotSame($plain['headers']['etag'], $gz['headers']['etag'], 'each variant its own tag');

            // br where the client prefers it (or weighs it the same), gzip where it prefers gzip.
            $br = self::get('/pre.txt', ['Accept-Encoding' => 'gzip, br']);
            self::assertSame(['br', 'pretend these are brotli bytes'], [$br['headers']['content-encoding'], $br['body']]);
            self::assertSame('gzip', self::get('/pre.txt', ['Accept-Encoding' => 'br;q=0.5, gzip'])['headers']['content-encoding']);
            self::assertSame('gzip', self::get('/pre.txt', ['Accept-Encoding' => 'br;q=0, *'])['headers']['content-encoding']);

            // Revalidation of the variant held, HEAD, and a Range (identity bytes, as for on-the-fly gzip).
            $client = new RawHttp(self::$server->address());
            $notModified = $client->send("GET /pre.txt HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\nIf-None-Match: {$gz['headers']['etag']}\r\n\r\n")->response();
            self::assertSame([304, $gz['headers']['etag'], 'Accept-Encoding'], [$notModified['status'], $notModified['headers']['etag'], $notModified['headers']['vary']]);
            $changed = $client->send("GET /pre.txt HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\nIf-None-Match: {$plain['headers']['etag']}\r\n\r\n")->response();
            self::assertSame([200, $gz['body']], [$changed['status'], $changed['body']], 'the identity tag does not match the gzip variant');
            $client->send("HEAD /pre.txt HTTP/1.1\r\nHost: t\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n");
            $head = $client->rest();
            $client->close();
            self::assertStringContainsString("\r\nContent-Length: " . \filesize("$root/pre.txt.gz") . "\r\n", $head);
            self::assertStringEndsWith("\r\n\r\n", $head);
            $range = self::get('/pre.txt', ['Accept-Encoding' => 'gzip', 'Range' => 'bytes=0-9']);
            self::assertSame([206, 'precompres', 'Accept-Encoding'], [$range['status'], $range['body'], $range['headers']['vary']]);
            self::assertArrayNotHasKey('content-encoding', $range['headers']);
            $parts = self::get('/pre.txt', ['Range' => 'bytes=0-9,20-29']);
            self::assertSame(206, $parts['status']);
            self::assertStringStartsWith('multipart/byteranges', $parts['headers']['content-type']);
            self::assertSame('Accept-Encoding', $parts['headers']['vary'], 'parts of a representation that varies');

            // A sibling older than the file is stale: never served (gzip on the fly instead).
            \touch("$root/pre.txt.gz", \time() - 20);
            \touch("$root/pre.txt.br", \time() - 20);
            $stale = self::get('/pre.txt', ['Accept-Encoding' => 'gzip, br']);
            self::assertSame('gzip', $stale['headers']['content-encoding']);
            self::assertNotSame(\file_get_contents("$root/pre.txt.gz"), $stale['body']);
            self::assertSame($identity, \gzdecode($stale['body']));
        } finally {
            @\unlink("$root/pre.txt");
            @\unlink("$root/pre.txt.gz");
            @\unlink("$root/pre.txt.br");
        }
    }

    public function testPrecompressedSiblingsFollowTheFilesRules(): void
    {
        $root = self::$docRoot->root;
        $base = self::$docRoot->base;
        // A type never compressed on the fly still has its sibling served, and its answers vary.
        \file_put_contents("$root/pic.png", \str_repeat("\x89PNG", 100));
        \file_put_contents("$root/pic.png.gz", \gzencode(\str_repeat("\x89PNG", 100)));
        // A sibling that is a symlink out of the root is not served (as the file itself would not be).
        \file_put_contents("$root/linked.txt", \str_repeat("linked text\n", 200));
        \file_put_contents("$base/outside.gz", \gzencode('OUTSIDE THE ROOT'));
        \symlink("$base/outside.gz", "$root/linked.txt.gz");
        try {
            $png = self::get('/pic.png', ['Accept-Encoding' => 'gzip']);
            self::assertSame(['gzip', 'Accept-Encoding'], [$png['headers']['content-encoding'], $png['headers']['vary']]);
            self::assertSame('image/png', $png['headers']['content-type']);
            self::assertSame('Accept-Encoding', self::get('/pic.png')['headers']['vary']);
            $linked = self::get('/linked.txt', ['Accept-Encoding' => 'gzip']);
            self::assertSame(\str_repeat("linked text\n", 200), \gzdecode($linked['body']), 'compressed on the fly, not the outside file');

            // With --gzip off no sibling is looked at.
            $off = new ServerProcess([self::APP, '--workers', '1', '--static', $root, '--gzip', 'off']);
            $response = RawHttp::get($off->address(), '/pic.png', ['Accept-Encoding' => 'gzip']);
            $off->stop();
            self::assertSame(\str_repeat("\x89PNG", 100), $response['body']);
            self::assertArrayNotHasKey('content-encoding', $response['headers']);
        } finally {
            foreach (["$root/pic.png", "$root/pic.png.gz", "$root/linked.txt", "$root/linked.txt.gz", "$base/outside.gz"] as $file) {
                @\unlink($file);
            }
        }
    }

    public function testOptionsTurnItOffOrChangeWhatIsCompressed(): void
    {
        $off = new ServerProcess([self::APP, '--workers', '1', '--static', self::$docRoot->root, '--gzip', 'off']);
        $response = RawHttp::get($off->address(), '/data.json', ['Accept-Encoding' => 'gzip']);
        self::assertArrayNotHasKey('content-encoding', $response['headers']);
        self::assertArrayNotHasKey('vary', $response['headers']);
        $off->stop();

        $custom = new ServerProcess([self::APP, '--workers', '1', '--static', self::$docRoot->root,
            '--gzip-types', 'text/plain', '--gzip-min-length', '10', '--gzip-level', '1']);
        $text = RawHttp::get($custom->address(), '/hello.txt', ['Accept-Encoding' => 'gzip']);
        self::assertSame('gzip', $text['headers']['content-encoding'] ?? null, 'text/plain of 20 bytes, over a 10 byte threshold');
        self::assertSame("Hello, static world\n", \gzdecode($text['body']));
        $json = RawHttp::get($custom->address(), '/data.json', ['Accept-Encoding' => 'gzip']);
        self::assertArrayNotHasKey('content-encoding', $json['headers'], 'JSON is not in the type list any more');
        $custom->stop();
    }

    public function testBadOptionsAreRefusedWithAReason(): void
    {
        foreach ([
            [['--static', '/nonexistent/weft-docroot'], 'is not a directory'],
            [['--gzip-level', '12'], 'between 1 and 9'],
            [['--gzip-types', 'not a type'], 'is not a media type pattern'],
            [['--gzip', 'maybe'], 'expects one of on, off'],
            [['--static', '.', '--mode', 'fpm'], 'not available in fpm mode'],
            [['--static', '.', '--protocol', 'line'], "needs --protocol http"],
        ] as [$args, $reason]) {
            // A pid file of its own: the default one for port 0 is shared with every other
            // `--port 0` server on the machine, and one running would answer "already running".
            $pidFile = \sys_get_temp_dir() . '/weft-gzip-options-' . \getmypid() . '.pid';
            [$code, $out] = ServerProcess::cli(['serve', self::APP, '--port', '0', '--pid-file', $pidFile, ...$args]);
            self::assertSame(2, $code, $out);
            self::assertStringContainsString($reason, $out);
        }
    }
}
