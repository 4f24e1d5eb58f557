<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Message;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Http\Message\BodyFraming;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Message\ResponseEncoder;
use Weft\Http\Parser\ResponseParser;

final class ResponseEncoderTest extends TestCase
{
    private const DATE = 'Sun, 06 Nov 1994 08:49:37 GMT';

    /** @return iterable<string, array{Response, string, bool, bool, string}> */
    public static function encodings(): iterable
    {
        yield 'HTTP/1.1 keep-alive' => [
            new Response(200, ['Content-Type' => 'text/plain'], 'Hello World'), '1.1', true, false,
            "HTTP/1.1 200 OK\r\nServer: weft\r\nDate: " . self::DATE . "\r\nContent-Type: text/plain\r\nContent-Length: 11\r\nConnection: keep-alive\r\n\r\nHello World",
        ];
        yield 'HTTP/1.1 close' => [
            new Response(404, [], 'nope'), '1.1', false, false,
            "HTTP/1.1 404 Not Found\r\nServer: weft\r\nDate: " . self::DATE . "\r\nContent-Length: 4\r\nConnection: close\r\n\r\nnope",
        ];
        yield 'HTTP/1.0 keep-alive' => [
            new Response(200, [], 'x'), '1.0', true, false,
            "HTTP/1.0 200 OK\r\nServer: weft\r\nDate: " . self::DATE . "\r\nContent-Length: 1\r\nConnection: keep-alive\r\n\r\nx",
        ];
        yield 'HTTP/1.0 close' => [
            new Response(200, [], 'x'), '1.0', false, false,
            "HTTP/1.0 200 OK\r\nServer: weft\r\nDate: " . self::DATE . "\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx",
        ];
        yield 'empty body' => [
            new Response(200), '1.1', true, false,
            "HTTP/1.1 200 OK\r\nServer: weft\r\nDate: " . self::DATE . "\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n",
        ];
        yield 'HEAD describes the body without sending it' => [
            new Response(200, ['Content-Type' => 'text/html'], '<html></html>'), '1.1', true, true,
            "HTTP/1.1 200 OK\r\nServer: weft\r\nDate: " . self::DATE . "\r\nContent-Type: text/html\r\nContent-Length: 13\r\nConnection: keep-alive\r\n\r\n",
        ];
        yield 'HEAD keeps the handler Content-Length' => [
            new Response(200, ['Content-Length' => '5000']), '1.1', true, true,
            "HTTP/1.1 200 OK\r\nServer: weft\r\nDate: " . self::DATE . "\r\nContent-Length: 5000\r\nConnection: keep-alive\r\n\r\n",
        ];
        yield '204 has neither body nor length' => [
            new Response(204, ['Content-Length' => '10', 'X-A' => 'b'], 'ignored'), '1.1', true, false,
            "HTTP/1.1 204 No Content\r\nServer: weft\r\nDate: " . self::DATE . "\r\nX-A: b\r\nConnection: keep-alive\r\n\r\n",
        ];
        yield '304 keeps a given length, adds none, sends no body' => [
            new Response(304, ['ETag' => '"v1"', 'Content-Length' => '42'], 'ignored'), '1.1', true, false,
            "HTTP/1.1 304 Not Modified\r\nServer: weft\r\nDate: " . self::DATE . "\r\nETag: \"v1\"\r\nContent-Length: 42\r\nConnection: keep-alive\r\n\r\n",
        ];
        yield '304 without length' => [
            new Response(304), '1.1', true, false,
            "HTTP/1.1 304 Not Modified\r\nServer: weft\r\nDate: " . self::DATE . "\r\nConnection: keep-alive\r\n\r\n",
        ];
        yield '1xx' => [
            new Response(103, ['Link' => '</style.css>; rel=preload']), '1.1', true, false,
            "HTTP/1.1 103 Early Hints\r\nServer: weft\r\nDate: " . self::DATE . "\r\nLink: </style.css>; rel=preload\r\nConnection: keep-alive\r\n\r\n",
        ];
        yield 'handler Content-Length and Connection are replaced' => [
            new Response(200, ['content-length' => '999', 'Connection' => 'close'], 'abc'), '1.1', true, false,
            "HTTP/1.1 200 OK\r\nServer: weft\r\nDate: " . self::DATE . "\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nabc",
        ];
        yield 'an upgrade option of the handler survives (a 426 with Upgrade)' => [
            new Response(426, ['Upgrade' => 'websocket', 'Connection' => 'Upgrade'], ''), '1.1', false, false,
            "HTTP/1.1 426 Upgrade Required\r\nServer: weft\r\nDate: " . self::DATE . "\r\nUpgrade: websocket\r\nContent-Length: 0\r\nConnection: Upgrade, close\r\n\r\n",
        ];
        yield 'handler Transfer-Encoding means a pre-encoded body' => [
            new Response(200, ['Transfer-Encoding' => 'chunked'], "3\r\nabc\r\n0\r\n\r\n"), '1.1', true, false,
            "HTTP/1.1 200 OK\r\nServer: weft\r\nDate: " . self::DATE . "\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        ];
        yield 'handler Server and Date win' => [
            new Response(200, ['Server' => 'custom', 'date' => 'Mon, 01 Jan 2024 00:00:00 GMT'], ''), '1.1', true, false,
            "HTTP/1.1 200 OK\r\nServer: custom\r\ndate: Mon, 01 Jan 2024 00:00:00 GMT\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n",
        ];
        yield 'repeated fields and numeric names' => [
            new Response(200, ['Set-Cookie' => ['a=1', 'b=2'], '123' => 4]), '1.1', true, false,
            "HTTP/1.1 200 OK\r\nServer: weft\r\nDate: " . self::DATE . "\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n123: 4\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n",
        ];
        yield 'custom reason' => [
            new Response(200, [], '', 'Fine'), '1.1', true, false,
            "HTTP/1.1 200 Fine\r\nServer: weft\r\nDate: " . self::DATE . "\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n",
        ];
        yield 'unknown status has an empty reason' => [
            new Response(299), '1.1', true, false,
            "HTTP/1.1 299 \r\nServer: weft\r\nDate: " . self::DATE . "\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n",
        ];
    }

    #[DataProvider('encodings')]
    public function testEncode(Response $response, string $version, bool $keepAlive, bool $isHead, string $expected): void
    {
        $encoder = new ResponseEncoder();
        self::assertSame($expected, $encoder->encode($response, $version, $keepAlive, $isHead, self::DATE));
        self::assertSame($expected, $encoder->encode($response, $version, $keepAlive, $isHead, self::DATE), 'with a cached status line');
    }

    public function testStatusLineCacheIsPerVersionAndReason(): void
    {
        $encoder = new ResponseEncoder();
        self::assertStringStartsWith("HTTP/1.1 200 OK\r\n", $encoder->encode(new Response(), '1.1', true, false, 'd'));
        self::assertStringStartsWith("HTTP/1.0 200 OK\r\n", $encoder->encode(new Response(), '1.0', true, false, 'd'));
        self::assertStringStartsWith("HTTP/1.1 200 Custom\r\n", $encoder->encode(new Response(200, [], '', 'Custom'), '1.1', true, false, 'd'));
        self::assertStringStartsWith("HTTP/1.1 200 OK\r\n", $encoder->encode(new Response(), '1.1', true, false, 'd'));
    }

    public function testServerName(): void
    {
        self::assertStringStartsWith("HTTP/1.1 200 OK\r\nServer: edge/1\r\nDate", (new ResponseEncoder('edge/1'))->encode(new Response(), '1.1', true, false, 'd'));
        self::assertStringStartsWith("HTTP/1.1 200 OK\r\nDate", (new ResponseEncoder(''))->encode(new Response(), '1.1', true, false, 'd'));
        $this->expectException(\InvalidArgumentException::class);
        new ResponseEncoder("x\r\ny");
    }

    /** @return iterable<string, array{array<string, mixed>}> */
    public static function injections(): iterable
    {
        yield 'CRLF in value' => [['X-A' => "a\r\nSet-Cookie: evil=1"]];
        yield 'LF in value' => [['X-A' => "a\nb"]];
        yield 'NUL in value' => [['X-A' => "a\0b"]];
        yield 'CR in a list value' => [['X-A' => ['ok', "b\rc"]]];
        yield 'space in name' => [['X A' => 'b']];
        yield 'colon in name' => [['X:A' => 'b']];
        yield 'CRLF in name' => [["X\r\nY" => 'b']];
    }

    /** @param array<string, mixed> $headers */
    #[DataProvider('injections')]
    public function testHeaderInjectionIsRefused(array $headers): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage('Invalid response header');
        (new ResponseEncoder())->encode(new Response(200, $headers), '1.1', true, false, 'd');
    }

    public function testInvalidContentLengthIsRefused(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        (new ResponseEncoder())->encode(new Response(200, ['Content-Length' => '-1']), '1.1', true, true, 'd');
    }

    public function testEncodeRefusesStreamedResponses(): void
    {
        $this->expectException(\LogicException::class);
        (new ResponseEncoder())->encode(Response::stream(static function (): void {}), '1.1', true, false, 'd');
    }

    /** @return iterable<string, array{Response, string, bool, bool, string, BodyFraming}> */
    public static function streamedHeads(): iterable
    {
        $stream = static fn (int $status = 200, array $headers = []): Response => Response::stream(static function (): void {}, $status, $headers);
        yield 'HTTP/1.1 is chunked' => [
            $stream(200, ['Content-Type' => 'text/event-stream', 'Transfer-Encoding' => 'gzip']), '1.1', true, false,
            "HTTP/1.1 200 OK\r\nServer: weft\r\nDate: d\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n",
            BodyFraming::Chunked,
        ];
        yield 'HTTP/1.0 is delimited by close' => [
            $stream(), '1.0', true, false,
            "HTTP/1.0 200 OK\r\nServer: weft\r\nDate: d\r\nConnection: close\r\n\r\n",
            BodyFraming::CloseDelimited,
        ];
        yield 'a declared length is raw' => [
            $stream(200, ['Content-Length' => '10']), '1.0', true, false,
            "HTTP/1.0 200 OK\r\nServer: weft\r\nDate: d\r\nContent-Length: 10\r\nConnection: keep-alive\r\n\r\n",
            BodyFraming::ContentLength,
        ];
        yield 'HEAD sends no framing for an unknown length' => [
            $stream(), '1.1', true, true,
            "HTTP/1.1 200 OK\r\nServer: weft\r\nDate: d\r\nConnection: keep-alive\r\n\r\n",
            BodyFraming::None,
        ];
        yield '204 has no body' => [
            $stream(204), '1.1', false, false,
            "HTTP/1.1 204 No Content\r\nServer: weft\r\nDate: d\r\nConnection: close\r\n\r\n",
            BodyFraming::None,
        ];
        yield '304 has no body' => [
            $stream(304), '1.0', true, false,
            "HTTP/1.0 304 Not Modified\r\nServer: weft\r\nDate: d\r\nConnection: keep-alive\r\n\r\n",
            BodyFraming::None,
        ];
    }

    #[DataProvider('streamedHeads')]
    public function testStreamedHeadAndFraming(Response $response, string $version, bool $keepAlive, bool $isHead, string $head, BodyFraming $framing): void
    {
        $encoder = new ResponseEncoder();
        self::assertSame($head, $encoder->encodeHead($response, $version, $keepAlive, $isHead, 'd'));
        self::assertSame($framing, $encoder->framing($response, $version, $isHead));
    }

    public function testEncodeHeadOfAStringResponse(): void
    {
        $encoder = new ResponseEncoder();
        $response = new Response(200, [], 'body');
        $full = $encoder->encode($response, '1.1', true, false, 'd');
        self::assertSame($full, $encoder->encodeHead($response, '1.1', true, false, 'd') . 'body');
        self::assertSame(BodyFraming::ContentLength, $encoder->framing($response, '1.1', false));
        self::assertSame(BodyFraming::None, $encoder->framing($response, '1.1', true));
    }

    public function testChunks(): void
    {
        $encoder = new ResponseEncoder();
        self::assertSame("5\r\nhello\r\n", $encoder->encodeChunk('hello'));
        self::assertSame('12c' . "\r\n" . str_repeat('x', 300) . "\r\n", $encoder->encodeChunk(str_repeat('x', 300)));
        self::assertSame('', $encoder->encodeChunk(''), 'an empty chunk would end the body');
        self::assertSame("0\r\n\r\n", $encoder->lastChunk());
        self::assertSame("0\r\ngrpc-status: 0\r\nX-A: 1\r\nX-A: 2\r\n\r\n", $encoder->lastChunk([['grpc-status', '0'], ['X-A', '1'], ['X-A', '2']]));
        self::assertSame("HTTP/1.1 100 Continue\r\n\r\n", ResponseEncoder::CONTINUE);
    }

    public function testHttpDate(): void
    {
        self::assertSame(self::DATE, ResponseEncoder::httpDate(784111777));
    }

    /** @return iterable<string, array{Request, Response, bool}> */
    public static function keepAliveCases(): iterable
    {
        $get11 = Request::create('GET', '/', ['Host' => 'x']);
        $get10 = Request::create('GET', '/', [], '', '1.0');
        $get10ka = Request::create('GET', '/', ['Connection' => 'keep-alive'], '', '1.0');
        $stream = Response::stream(static function (): void {});
        yield '1.1 plain' => [$get11, new Response(), true];
        yield '1.1 client close' => [Request::create('GET', '/', ['Connection' => 'close']), new Response(), false];
        yield '1.1 handler close' => [$get11, new Response(200, ['Connection' => 'Close']), false];
        yield '1.1 stream' => [$get11, $stream, true];
        yield '1.0 plain' => [$get10, new Response(), false];
        yield '1.0 keep-alive' => [$get10ka, new Response(), true];
        yield '1.0 keep-alive, stream of unknown length' => [$get10ka, $stream, false];
        yield '1.0 keep-alive, stream of known length' => [$get10ka, $stream->withHeader('Content-Length', '3'), true];
        yield '1.0 keep-alive HEAD stream' => [Request::create('HEAD', '/', ['Connection' => 'keep-alive'], '', '1.0'), $stream, true];
    }

    #[DataProvider('keepAliveCases')]
    public function testKeepAliveDecision(Request $request, Response $response, bool $expected): void
    {
        self::assertSame($expected, (new ResponseEncoder())->keepAlive($request, $response));
    }

    public function testEncodedChunkedStreamParsesBack(): void
    {
        $encoder = new ResponseEncoder();
        $response = Response::stream(static function (): void {}, 200, ['Content-Type' => 'text/plain']);
        $wire = $encoder->encodeHead($response, '1.1', true, false, 'd');
        foreach (['first ', '', 'second ', str_repeat('z', 5000)] as $chunk) {
            $wire .= $encoder->encodeChunk($chunk);
        }
        $wire .= $encoder->lastChunk();
        $wire .= $encoder->encode(new Response(201, [], 'next'), '1.1', true, false, 'd');

        $parser = new ResponseParser();
        $parser->push($wire);
        $first = $parser->next();
        self::assertSame('first second ' . str_repeat('z', 5000), $first?->body());
        self::assertSame('weft', $first->header('server'));
        self::assertSame('next', $parser->next()?->body());
    }

    /**
     * One encoder serves a worker's every response and keeps what it made of the last header set: any
     * sequence of responses, valid or not, is encoded exactly as a fresh encoder encodes each alone.
     */
    public function testAReusedEncoderEncodesEveryResponseAsAFreshOneDoes(): void
    {
        $plain = ['Content-Type' => 'text/plain'];
        $responses = [
            new Response(200, $plain, 'a'),
            new Response(200, $plain, 'bb'),
            new Response(404, $plain, 'gone'),
            new Response(200, ['Content-Type' => 'text/plain', 'Server' => 'mine', 'Date' => 'then'], 'own'),
            new Response(200, $plain, 'back'),
            new Response(426, ['Connection' => 'Upgrade', 'Upgrade' => 'websocket'], 'upgrade'),
            new Response(200, ['Content-Length' => '99', 'X-Multi' => ['1', '2']], 'cl'),
            new Response(304, ['Content-Length' => '99', 'ETag' => '"x"'], ''),
            new Response(200, ['X-Bad' => "a\r\nInjected: yes"], 'bad'),
            new Response(200, ['X-Bad' => 'a', 'Injected' => 'yes'], 'good again'),
            new Response(200, ['X-Bad' => "a\r\nInjected: yes"], 'bad again'),
            new Response(200, [], 'none'),
            new Response(200, ['Transfer-Encoding' => 'chunked'], "1\r\nx\r\n0\r\n\r\n"),
            new Response(200, ['Connection' => 'close'], 'closes'),
            new Response(200, ['Connection' => 'keep-alive', 'connection' => 'close'], 'the first one counts'),
            new Response(200, ['Connection' => ['upgrade', 'close']], 'closes too'),
            new Response(200, $plain, 'last'),
        ];
        $reused = new ResponseEncoder();
        foreach ([false, true] as $isHead) {
            foreach (['1.1', '1.0'] as $version) {
                foreach ($responses as $i => $response) {
                    foreach (['Thu, 26 Nov 2026 23:59:59 GMT', 'Fri, 27 Nov 2026 00:00:00 GMT'] as $date) {
                        self::assertSame(
                            self::outcome(new ResponseEncoder(), $response, $version, $isHead, $date),
                            self::outcome($reused, $response, $version, $isHead, $date),
                            "response $i, HTTP/$version" . ($isHead ? ', HEAD' : ''),
                        );
                        $request = Request::create($isHead ? 'HEAD' : 'GET', '/', [], '', $version);
                        self::assertSame((new ResponseEncoder())->keepAlive($request, $response), $reused->keepAlive($request, $response), "keep-alive, response $i");
                    }
                }
            }
        }
    }

    private static function outcome(ResponseEncoder $encoder, Response $response, string $version, bool $isHead, string $date): string
    {
        try {
            return $encoder->encode($response, $version, $version === '1.1', $isHead, $date);
        } catch (\InvalidArgumentException $e) {
            return 'refused: ' . $e->getMessage();
        }
    }
}
