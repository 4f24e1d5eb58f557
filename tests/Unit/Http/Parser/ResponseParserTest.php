<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Parser;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Http\Parser\HttpError;
use Weft\Http\Parser\Limits;
use Weft\Http\Parser\ParsedResponse;
use Weft\Http\Parser\ResponseParser;

final class ResponseParserTest extends TestCase
{
    /**
     * @return iterable<string, array{string, list<string>, bool, list<array<string, mixed>>, int|null}>
     *         raw, request methods in order, finish() at the end, expected responses, expected error
     */
    public static function vectors(): iterable
    {
        yield 'Content-Length' => [
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello",
            ['GET'], false,
            [['status' => 200, 'reason' => 'OK', 'version' => '1.1', 'headers' => ['content-type' => ['text/plain'], 'content-length' => ['5']], 'body' => 'hello', 'trailers' => []]],
            null,
        ];
        yield 'chunked with trailers' => [
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Checksum: 9\r\n\r\n",
            ['GET'], false,
            [['status' => 200, 'reason' => 'OK', 'version' => '1.1', 'headers' => ['transfer-encoding' => ['chunked']], 'body' => 'abcde', 'trailers' => ['x-checksum' => ['9']]]],
            null,
        ];
        yield 'until close' => [
            "HTTP/1.0 200 OK\r\nServer: old\r\n\r\nall of this\r\nuntil the end",
            ['GET'], true,
            [['status' => 200, 'reason' => 'OK', 'version' => '1.0', 'headers' => ['server' => ['old']], 'body' => "all of this\r\nuntil the end", 'trailers' => []]],
            null,
        ];
        yield 'non-chunked Transfer-Encoding reads until close' => [
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n\x1f\x8b...",
            ['GET'], true,
            [['status' => 200, 'reason' => 'OK', 'version' => '1.1', 'headers' => ['transfer-encoding' => ['gzip']], 'body' => "\x1f\x8b...", 'trailers' => []]],
            null,
        ];
        yield 'HEAD, 204 and 304 have no body; 1xx comes first' => [
            "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"
            . "HTTP/1.1 204 No Content\r\n\r\n"
            . "HTTP/1.1 100 Continue\r\n\r\n"
            . "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n",
            ['HEAD', 'DELETE', 'GET', 'GET'], false,
            [
                ['status' => 200, 'reason' => 'OK', 'version' => '1.1', 'headers' => ['content-length' => ['100']], 'body' => '', 'trailers' => []],
                ['status' => 204, 'reason' => 'No Content', 'version' => '1.1', 'headers' => [], 'body' => '', 'trailers' => []],
                ['status' => 100, 'reason' => 'Continue', 'version' => '1.1', 'headers' => [], 'body' => '', 'trailers' => []],
                ['status' => 304, 'reason' => 'Not Modified', 'version' => '1.1', 'headers' => ['content-length' => ['50']], 'body' => '', 'trailers' => []],
            ],
            null,
        ];
        yield 'CONNECT 200 opens a tunnel without body' => [
            "HTTP/1.1 200 Connection established\r\n\r\n",
            ['CONNECT'], false,
            [['status' => 200, 'reason' => 'Connection established', 'version' => '1.1', 'headers' => [], 'body' => '', 'trailers' => []]],
            null,
        ];
        yield 'status line without reason' => [
            "HTTP/1.1 404\r\nContent-Length: 0\r\n\r\nHTTP/1.1 500 \r\nContent-Length: 1\r\n\r\nx",
            ['GET', 'GET'], false,
            [
                ['status' => 404, 'reason' => '', 'version' => '1.1', 'headers' => ['content-length' => ['0']], 'body' => '', 'trailers' => []],
                ['status' => 500, 'reason' => '', 'version' => '1.1', 'headers' => ['content-length' => ['1']], 'body' => 'x', 'trailers' => []],
            ],
            null,
        ];
        yield 'pipelined Content-Length and chunked' => [
            "HTTP/1.1 201 Created\r\nContent-Length: 2\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\nokHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n",
            ['POST', 'GET'], false,
            [
                ['status' => 201, 'reason' => 'Created', 'version' => '1.1', 'headers' => ['content-length' => ['2'], 'set-cookie' => ['a=1', 'b=2']], 'body' => 'ok', 'trailers' => []],
                ['status' => 200, 'reason' => 'OK', 'version' => '1.1', 'headers' => ['transfer-encoding' => ['chunked']], 'body' => 'z', 'trailers' => []],
            ],
            null,
        ];
        yield 'truncated Content-Length body' => ["HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", ['GET'], true, [], 400];
        yield 'truncated chunked body' => ["HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", ['GET'], true, [], 400];
        yield 'truncated head' => ["HTTP/1.1 200 OK\r\nContent-", ['GET'], true, [], 400];
        yield 'malformed status line' => ["HTTP/1.1 20 OK\r\n\r\n", ['GET'], false, [], 400];
        yield 'not HTTP at all' => ["SSH-2.0-OpenSSH\r\n\r\n", ['GET'], false, [], 400];
        yield 'HTTP/2 status line' => ["HTTP/2.0 200 OK\r\n\r\n", ['GET'], false, [], 505];
        yield 'bare LF' => ["HTTP/1.1 200 OK\nContent-Length: 0\n\n", ['GET'], false, [], 400];
        yield 'invalid Content-Length' => ["HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", ['GET'], false, [], 400];
        yield 'obs-fold' => ["HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", ['GET'], false, [], 400];
        yield 'invalid chunk' => ["HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n", ['GET'], false, [], 400];
    }

    /**
     * @param list<string> $methods
     * @param list<array<string, mixed>> $expected
     */
    #[DataProvider('vectors')]
    public function testAtOnceAndByteByByte(string $raw, array $methods, bool $finish, array $expected, ?int $error): void
    {
        self::assertSame(['responses' => $expected, 'error' => $error], self::feed([$raw], $methods, $finish));
        self::assertSame(['responses' => $expected, 'error' => $error], self::feed(str_split($raw), $methods, $finish));
        for ($at = 1; $at < \strlen($raw); $at++) {
            self::assertSame(['responses' => $expected, 'error' => $error], self::feed([substr($raw, 0, $at), substr($raw, $at)], $methods, $finish), "split at $at");
        }
    }

    public function testUntilCloseWaitsForFinish(): void
    {
        $parser = new ResponseParser();
        $parser->push("HTTP/1.1 200 OK\r\n\r\npart one, ");
        self::assertNull($parser->next());
        $parser->push('part two');
        self::assertNull($parser->next());
        self::assertTrue($parser->hasPartial());
        self::assertSame('part one, part two', $parser->finish()?->body());
        self::assertFalse($parser->hasPartial());
    }

    public function testFinishWithNothingInProgress(): void
    {
        $parser = new ResponseParser();
        $parser->push("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na");
        self::assertSame('a', $parser->next()?->body());
        self::assertNull($parser->finish());

        $this->expectException(\LogicException::class);
        $parser->push('more');
    }

    public function testBodyLimits(): void
    {
        $limits = (new Limits())->withMaxBodyBytes(4);
        foreach ([
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n",
            "HTTP/1.1 200 OK\r\n\r\n12345",
        ] as $raw) {
            $parser = new ResponseParser($limits);
            $parser->push($raw);
            try {
                $parser->next();
                self::fail('Expected an HttpError for ' . json_encode($raw));
            } catch (HttpError $e) {
                self::assertSame(413, $e->status);
            }
        }
    }

    public function testHeadLimit(): void
    {
        $parser = new ResponseParser((new Limits())->withMaxHeaderBytes(64));
        $parser->push("HTTP/1.1 200 OK\r\nX-Long: " . str_repeat('a', 60));
        $this->expectExceptionObject(HttpError::headerTooLarge(64));
        $parser->next();
    }

    public function testKeepAliveAndLookups(): void
    {
        $parser = new ResponseParser();
        $parser->push("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            . "HTTP/1.0 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n"
            . "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-A: 1\r\nx-a: 2\r\n\r\n");
        $close = $parser->next();
        $old = $parser->next();
        $plain = $parser->next();
        self::assertInstanceOf(ParsedResponse::class, $plain);
        self::assertFalse($close?->keepAlive());
        self::assertTrue($old?->keepAlive());
        self::assertTrue($plain->keepAlive());
        self::assertSame('1, 2', $plain->header('X-A'));
        self::assertTrue($plain->hasHeader('x-a'));
        self::assertFalse($plain->hasHeader('x-b'));
        self::assertNull($plain->header('x-b'));
        self::assertFalse($plain->isInformational());
    }

    /**
     * @param list<string> $chunks
     * @param list<string> $methods
     * @return array{responses: list<array<string, mixed>>, error: int|null}
     */
    private static function feed(array $chunks, array $methods, bool $finish): array
    {
        $parser = new ResponseParser();
        $responses = [];
        try {
            foreach ($chunks as $chunk) {
                $parser->push($chunk);
                while (($response = $parser->next($methods[\count($responses)] ?? 'GET')) !== null) {
                    $responses[] = self::describe($response);
                }
            }
            if ($finish && ($response = $parser->finish()) !== null) {
                $responses[] = self::describe($response);
            }
        } catch (HttpError $e) {
            return ['responses' => $responses, 'error' => $e->status];
        }
        return ['responses' => $responses, 'error' => null];
    }

    /** @return array<string, mixed> */
    private static function describe(ParsedResponse $response): array
    {
        return [
            'status' => $response->status(),
            'reason' => $response->reason(),
            'version' => $response->version(),
            'headers' => $response->headers(),
            'body' => $response->body(),
            'trailers' => $response->trailers(),
        ];
    }
}
