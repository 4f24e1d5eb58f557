<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Http;

use PHPUnit\Framework\TestCase;
use Weft\Http2\Frame;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\RawHttp2;
use Weft\Tests\Support\ServerProcess;

/**
 * Response trailers (Response::withTrailers()) on the wire, read by real clients and raw bytes: the
 * trailer section of a chunked HTTP/1.1 body, a HEADERS frame with END_STREAM after the last DATA on
 * HTTP/2; none where none can go (HTTP/1.0, HEAD, 204); after a gzip-compressed body; and a defined
 * outcome for trailers an application gets wrong.
 */
final class ResponseTrailersTest extends TestCase
{
    private const APP = __DIR__ . '/fixtures/trailers-app.php';
    private const STREAM_MD5 = "part 0\npart 1\npart 2\n";

    private static ?ServerProcess $server = null;

    public static function setUpBeforeClass(): void
    {
        self::$server = new ServerProcess([self::APP, '--workers', '1']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
    }

    public function testHttp11SendsThemAfterTheLastChunkAndKeepsTheConnection(): void
    {
        $client = new RawHttp(self::$server->address());
        // Pipelined: the second answer starts right after the first one's trailer section.
        $client->send("GET /fixed HTTP/1.1\r\nHost: x\r\n\r\nGET /stream HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $raw = $client->rest();
        $client->close();
        [$first, $second, $third] = \array_pad(\explode('HTTP/1.1 200 OK', $raw), 4, '') === [] ? [] : \array_slice(\explode('HTTP/1.1 200 OK', $raw), 1);
        self::assertStringContainsString("\r\nTransfer-Encoding: chunked\r\n", $first);
        self::assertStringNotContainsStringIgnoringCase('content-length', $first);
        self::assertStringEndsWith("\r\n\r\n7\r\npayload\r\n0\r\ngrpc-status: 0\r\nGrpc-Message: OK\r\nx-list: a\r\nx-list: b\r\n\r\n", $first);
        // A closure's trailers, computed once the streamed body is out.
        self::assertStringEndsWith("0\r\ngrpc-status: 0\r\nx-md5: " . \md5(self::STREAM_MD5) . "\r\n\r\n", $second);
        self::assertStringEndsWith("\r\n\r\nno trailers", $third);

        // curl reads the trailer section (--raw shows it as sent) and the body as the application wrote it.
        $url = 'http://' . self::$server->address();
        $curl = Curl::run(['--raw', "$url/stream"]);
        self::assertSame(0, $curl['code'], $curl['err']);
        self::assertStringEndsWith("0\r\ngrpc-status: 0\r\nx-md5: " . \md5(self::STREAM_MD5) . "\r\n\r\n", $curl['out']);
        $curl = Curl::run(['--http1.1', '-D', '-', "$url/fixed"]);
        self::assertSame(0, $curl['code'], $curl['err']);
        self::assertStringEndsWith("\r\n\r\npayloadgrpc-status: 0\r\nGrpc-Message: OK\r\nx-list: a\r\nx-list: b\r\n", $curl['out']);
    }

    public function testNoneWhereNoneCanGo(): void
    {
        // HTTP/1.0 has no chunked coding: the body as it is, without its trailers.
        $client = new RawHttp(self::$server->address());
        $client->send("GET /fixed HTTP/1.0\r\n\r\n");
        $raw = $client->rest();
        self::assertStringContainsString("\r\nContent-Length: 7\r\n", $raw);
        self::assertStringEndsWith("\r\n\r\npayload", $raw);
        // HEAD: the head a GET gets (no length: the GET is chunked), no body, no trailer section.
        $client = new RawHttp(self::$server->address());
        $client->send("HEAD /fixed HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $raw = $client->rest();
        self::assertStringStartsWith('HTTP/1.1 200 OK', $raw);
        self::assertStringNotContainsStringIgnoringCase('content-length', $raw);
        self::assertStringEndsWith("\r\n\r\n", $raw);
        self::assertStringNotContainsString('grpc-status', $raw);
        // 204: no body, so no trailers either.
        $client = new RawHttp(self::$server->address());
        $client->send("GET /no-content HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $raw = $client->rest();
        self::assertStringStartsWith('HTTP/1.1 204 No Content', $raw);
        self::assertStringEndsWith("\r\n\r\n", $raw);
        self::assertStringNotContainsString('x-never', $raw);

        $client = new RawHttp2(self::$server->address());
        $client->send($client->headers(1, '/fixed', 'HEAD') . $client->headers(3, '/no-content'));
        foreach ([1, 3] as $stream) {
            $frame = $client->readUntil(Frame::HEADERS, $stream);
            self::assertSame(Frame::END_STREAM | Frame::END_HEADERS, $frame['flags']);
            self::assertStringNotContainsString('grpc-status', \json_encode($client->decoder->decode($frame['payload'])));
        }
        $client->close();
    }

    public function testHttp2SendsAHeadersFrameThatEndsTheStreamAfterTheLastData(): void
    {
        $client = new RawHttp2(self::$server->address());
        $client->send($client->headers(1, '/fixed'));
        self::assertSame([
            [Frame::HEADERS, Frame::END_HEADERS, null],
            [Frame::DATA, 0, 'payload'],
            [Frame::HEADERS, Frame::END_STREAM | Frame::END_HEADERS, [['grpc-status', '0'], ['grpc-message', 'OK'], ['x-list', 'a'], ['x-list', 'b']]],
        ], self::frames($client, 1));

        // A closure's, once the streamed body is out; on an empty body, right after the head.
        $client->send($client->headers(3, '/stream'));
        $frames = self::frames($client, 3);
        $last = \array_pop($frames);
        self::assertSame([Frame::HEADERS, Frame::END_STREAM | Frame::END_HEADERS, [['grpc-status', '0'], ['x-md5', \md5(self::STREAM_MD5)]]], $last);
        self::assertSame(self::STREAM_MD5, \implode('', \array_column(\array_slice($frames, 1), 2)));
        $client->send($client->headers(5, '/empty-body'));
        self::assertSame([
            [Frame::HEADERS, Frame::END_HEADERS, null],
            [Frame::HEADERS, Frame::END_STREAM | Frame::END_HEADERS, [['x-empty', 'body']]],
        ], self::frames($client, 5));

        // Larger than a frame: HEADERS (with END_STREAM) and CONTINUATION (with END_HEADERS), nothing between them.
        $client->send($client->headers(7, '/large'));
        $frames = self::frames($client, 7);
        self::assertSame([Frame::HEADERS, Frame::END_STREAM, null], $frames[2]);
        self::assertSame([Frame::CONTINUATION, Frame::END_HEADERS], [$frames[3][0], $frames[3][1]]);
        $client->close();

        // Real clients: curl shows them after the body, nghttp prints the frame.
        $url = 'http://' . self::$server->address();
        $curl = Curl::run(['--http2-prior-knowledge', '-D', '-', "$url/stream"]);
        self::assertSame(0, $curl['code'], $curl['err']);
        self::assertStringEndsWith("\r\n\r\n" . self::STREAM_MD5 . "grpc-status: 0\r\nx-md5: " . \md5(self::STREAM_MD5) . "\r\n", $curl['out']);
        $curl = Curl::run(['--http2-prior-knowledge', '-D', '-', "$url/fixed"]);
        self::assertSame(0, $curl['code'], $curl['err']);
        self::assertStringEndsWith("payloadgrpc-status: 0\r\ngrpc-message: OK\r\nx-list: a\r\nx-list: b\r\n", $curl['out']);
        self::assertStringNotContainsString('content-length', $curl['out']);
        $nghttp = self::exec(['nghttp', '-nv', "$url/fixed"]);
        self::assertMatchesRegularExpression('~recv DATA frame <length=7, flags=0x00, stream_id=(\d+)>.*recv \(stream_id=\1\) grpc-status: 0.*recv HEADERS frame <length=\d+, flags=0x05, stream_id=\1>\s+; END_STREAM \| END_HEADERS~s', $nghttp);
    }

    public function testTrailersFollowAGzippedBody(): void
    {
        $expected = \str_repeat("compress me, please\n", 200);
        $client = new RawHttp(self::$server->address());
        $client->send("GET /gzip HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n");
        $raw = $client->rest();
        [$head, $body] = \explode("\r\n\r\n", $raw, 2);
        self::assertStringContainsString("\r\nContent-Encoding: gzip", $head);
        $decoded = '';
        while (\preg_match('/\A([0-9a-f]+)\r\n/', $body, $m) === 1 && ($size = \hexdec($m[1])) > 0) {
            $decoded .= \substr($body, \strlen($m[0]), $size);
            $body = \substr($body, \strlen($m[0]) + $size + 2);
        }
        self::assertSame($expected, \gzdecode($decoded));
        self::assertSame("0\r\nx-done: yes\r\n\r\n", $body);

        $url = 'http://' . self::$server->address();
        foreach (['--http1.1', '--http2-prior-knowledge'] as $version) {
            $curl = Curl::run([$version, '--compressed', '-D', '-', "$url/gzip"]);
            self::assertSame(0, $curl['code'], $curl['err']);
            self::assertMatchesRegularExpression('~content-encoding: gzip\r\n~i', $curl['out']);
            self::assertStringEndsWith("\r\n\r\n" . $expected . "x-done: yes\r\n", $curl['out']);
        }
    }

    public function testTrailersTheApplicationGetsWrong(): void
    {
        $url = 'http://' . self::$server->address();
        // Fixed trailers are checked before the head goes out: a 500, as for a bad header.
        foreach (['/forbidden', '/bad-name'] as $path) {
            foreach (['--http1.1', '--http2-prior-knowledge'] as $version) {
                $curl = Curl::run([$version, '-w', '%{http_code}', "$url$path"]);
                self::assertSame([0, "Internal Server Error\n500"], [$curl['code'], $curl['out']], $path . ' ' . $version);
            }
        }
        // A closure's trailers come when the body is out: the answer is cut, never complete without them.
        foreach (['/late-bad' => 'body before the bad trailer', '/late-throw' => 'body before the failure'] as $path => $body) {
            $client = new RawHttp(self::$server->address());
            $client->send("GET $path HTTP/1.1\r\nHost: x\r\n\r\n");
            $raw = $client->rest(); // closed by the server, the last chunk never sent
            self::assertStringEndsWith(\dechex(\strlen($body)) . "\r\n$body\r\n", $raw);
            self::assertStringNotContainsString('Injected', $raw);

            $client = new RawHttp2(self::$server->address());
            $client->send($client->headers(1, $path));
            $frames = self::frames($client, 1);
            self::assertSame([Frame::RST_STREAM, 0, \pack('N', Frame::INTERNAL_ERROR)], \end($frames));
            // The connection goes on.
            $client->send($client->headers(3, '/'));
            self::assertSame([200, 'no trailers'], \array_values(\array_intersect_key($client->response(3), ['status' => 0, 'body' => 0])));
            $client->close();
        }
        $log = self::$server->output();
        self::assertStringContainsString('GET /forbidden: the response cannot be sent: "Content-Length" may not be a trailer', $log);
        self::assertStringContainsString('GET /bad-name: the response cannot be sent: Invalid response trailer ":status"', $log);
        self::assertStringContainsString('GET /late-bad: the response\'s trailers failed, resetting its stream: Invalid response trailer "x-bad"', $log);
        self::assertStringContainsString('GET /late-throw: the response\'s trailers failed, resetting its stream: no status to give', $log);
    }

    public function testADeclaredLengthStillHoldsAStreamedBodyThatGoesChunkedForItsTrailers(): void
    {
        // Exactly the length it declared: a complete chunked answer with its trailers, and the
        // connection goes on (the next request on it is answered).
        $client = new RawHttp(self::$server->address());
        $client->send("GET /declared-exact HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $raw = $client->rest();
        [$first, $second] = \array_slice(\explode('HTTP/1.1 200 OK', $raw), 1);
        self::assertStringNotContainsStringIgnoringCase('content-length', $first);
        self::assertStringEndsWith("\r\n\r\n4\r\ntwel\r\n8\r\nve bytes\r\n0\r\nx-done: yes\r\n\r\n", $first);
        self::assertStringEndsWith("\r\n\r\nno trailers", $second);

        // More or less than declared: cut before the last chunk (the excess never sent), the reason logged.
        foreach (['/declared-long' => "4\r\ntwel\r\n8\r\nve bytes\r\n", '/declared-short' => "4\r\ntwel\r\n2\r\nve\r\n"] as $path => $sent) {
            $client = new RawHttp(self::$server->address());
            $client->send("GET $path HTTP/1.1\r\nHost: x\r\n\r\n");
            $raw = $client->rest(); // closed by the server
            self::assertStringEndsWith("\r\n\r\n" . $sent, $raw, $path);
            self::assertStringNotContainsString('x-done', $raw, $path);
            $curl = Curl::run(['--http1.1', "http://" . self::$server->address() . $path]);
            self::assertNotSame(0, $curl['code'], $path . ': curl must see the answer incomplete');
        }
        // A declared length that is no length: a 500, as without trailers.
        $curl = Curl::run(['--http1.1', '-w', '%{http_code}', 'http://' . self::$server->address() . '/declared-bad']);
        self::assertSame([0, "Internal Server Error\n500"], [$curl['code'], $curl['out']]);
        $log = self::$server->output();
        self::assertStringContainsString('GET /declared-long: the streamed response failed, closing the connection: the producer wrote more than the declared Content-Length of 12 bytes', $log);
        self::assertStringContainsString('GET /declared-short: the streamed response failed, closing the connection: the producer wrote 6 of the declared Content-Length of 12 bytes', $log);
        self::assertStringContainsString('GET /declared-bad: the response cannot be sent: Content-Length must be a non-negative integer', $log);
    }

    /**
     * One stream's frames until it ends: [type, flags, payload], a HEADERS frame's payload decoded
     * when it is a trailer section (null for the response's head), RST_STREAM's raw.
     *
     * @return list<array{0: int, 1: int, 2: mixed}>
     */
    private static function frames(RawHttp2 $client, int $stream): array
    {
        $frames = [];
        $heads = 0;
        $block = '';
        while (($frame = $client->read()) !== null) {
            if ($frame['stream'] !== $stream) {
                continue;
            }
            $payload = $frame['payload'];
            if ($frame['type'] === Frame::HEADERS || $frame['type'] === Frame::CONTINUATION) {
                $block .= $payload;
                $payload = null;
                if (($frame['flags'] & Frame::END_HEADERS) !== 0) {
                    $fields = $client->decoder->decode($block);
                    $block = '';
                    if ($heads++ > 0 && $frame['type'] === Frame::HEADERS) {
                        $payload = $fields;
                    }
                }
            }
            $frames[] = [$frame['type'], $frame['flags'], $payload];
            if ($frame['type'] === Frame::RST_STREAM || ($frame['flags'] & Frame::END_STREAM) !== 0 && $frame['type'] !== Frame::CONTINUATION) {
                if ($frame['type'] !== Frame::HEADERS || ($frame['flags'] & Frame::END_HEADERS) !== 0) {
                    return $frames;
                }
            }
            if ($frame['type'] === Frame::CONTINUATION && ($frame['flags'] & Frame::END_HEADERS) !== 0 && $heads > 1) {
                return $frames;
            }
        }
        throw new \RuntimeException("the connection ended before stream $stream did");
    }

    /** @param list<string> $command */
    private static function exec(array $command): string
    {
        $process = \proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes);
        $out = (string) \stream_get_contents($pipes[1]);
        \fclose($pipes[1]);
        \proc_close($process);
        return $out;
    }
}
