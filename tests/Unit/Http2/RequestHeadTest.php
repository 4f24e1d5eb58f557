<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http2;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Http\Message\Response;
use Weft\Http\Parser\Limits;
use Weft\Http2\RequestHead;

/** RFC 9113 §8.3 on decoded header fields: the head HTTP/1.1's parser would give, malformed ones refused. */
final class RequestHeadTest extends TestCase
{
    private const GET = [[':method', 'GET'], [':scheme', 'https'], [':path', '/a?b=c'], [':authority', 'example.org']];

    public function testAHeadInHttp11Form(): void
    {
        $head = RequestHead::parse([...self::GET, ['accept', '*/*'], ['cookie', 'a=1'], ['host', 'ignored'], ['cookie', 'b=2'], ['content-length', '0']], new Limits());
        self::assertNotNull($head);
        self::assertSame(['GET', '/a?b=c', 0, null], [$head->method, $head->target, $head->contentLength, $head->refusal]);
        self::assertSame("\r\nhost: example.org\r\naccept: */*\r\ncontent-length: 0\r\ncookie: a=1; b=2", $head->headerBlock);
        // Without :authority, a host field names the host.
        $head = RequestHead::parse([[':method', 'GET'], [':scheme', 'http'], [':path', '/'], ['host', 'h.test']], new Limits());
        self::assertSame("\r\nhost: h.test", $head?->headerBlock);
    }

    /** @return iterable<string, array{list<array{0: string, 1: string}>}> */
    public static function malformed(): iterable
    {
        yield 'no :method' => [[[':scheme', 'http'], [':path', '/']]];
        yield 'no :path' => [[[':method', 'GET'], [':scheme', 'http']]];
        yield 'empty :path' => [[[':method', 'GET'], [':scheme', 'http'], [':path', '']]];
        yield 'no :scheme' => [[[':method', 'GET'], [':path', '/']]];
        yield 'two :method' => [[...self::GET, [':method', 'POST']]];
        yield 'a response pseudo-header' => [[...self::GET, [':status', '200']]];
        yield 'an unknown pseudo-header' => [[...self::GET, [':protocol', 'websocket']]];
        yield 'a pseudo-header after a field' => [[[':method', 'GET'], ['accept', '*/*'], [':scheme', 'http'], [':path', '/']]];
        yield 'an upper-case name' => [[...self::GET, ['Accept', '*/*']]];
        yield 'connection' => [[...self::GET, ['connection', 'close']]];
        yield 'transfer-encoding' => [[...self::GET, ['transfer-encoding', 'chunked']]];
        yield 'upgrade' => [[...self::GET, ['upgrade', 'h2c']]];
        yield 'te other than trailers' => [[...self::GET, ['te', 'gzip']]];
        yield 'CR in a value' => [[...self::GET, ['x-a', "a\rb"]]];
        yield 'LF in a value' => [[...self::GET, ['x-a', "a\nb"]]];
        yield 'NUL in a value' => [[...self::GET, ['x-a', "a\0b"]]];
        yield 'a value with leading space' => [[...self::GET, ['x-a', ' a']]];
        yield 'two different content-lengths' => [[...self::GET, ['content-length', '1'], ['content-length', '2']]];
        yield 'a content-length not a number' => [[...self::GET, ['content-length', '1e3']]];
        yield 'a path neither absolute nor *' => [[[':method', 'GET'], [':scheme', 'http'], [':path', 'a']]];
        yield '* for GET' => [[[':method', 'GET'], [':scheme', 'http'], [':path', '*']]];
        yield 'a name with a space' => [[...self::GET, ['x a', '1']]];
    }

    /** @param list<array{0: string, 1: string}> $fields */
    #[DataProvider('malformed')]
    public function testMalformedHeadsAreRefused(array $fields): void
    {
        self::assertNull(RequestHead::parse($fields, new Limits()));
    }

    public function testLimitsAnswerAsOnHttp11(): void
    {
        $limits = (new Limits())->withMaxTargetBytes(16)->withMaxHeaderCount(2)->withMaxBodyBytes(10);
        self::assertSame(414, RequestHead::parse([[':method', 'GET'], [':scheme', 'http'], [':path', '/' . \str_repeat('a', 20)]], $limits)?->refusal?->status());
        self::assertSame(431, RequestHead::parse([...self::GET, ['a', '1'], ['b', '2'], ['c', '3']], $limits)?->refusal?->status());
        self::assertSame(413, RequestHead::parse([...self::GET, ['content-length', '11']], $limits)?->refusal?->status());
        self::assertSame(501, RequestHead::parse([[':method', 'BREW'], [':scheme', 'http'], [':path', '/']], $limits)?->refusal?->status());
        self::assertSame(501, RequestHead::parse([[':method', 'CONNECT'], [':authority', 'a:443']], $limits)?->refusal?->status());
        self::assertSame('*', RequestHead::parse([[':method', 'OPTIONS'], [':scheme', 'http'], [':path', '*']], $limits)?->target);
    }

    public function testTrailers(): void
    {
        self::assertSame("\r\nx-checksum: abc", RequestHead::trailers([['x-checksum', 'abc']]));
        self::assertNull(RequestHead::trailers([[':path', '/']]));
        self::assertNull(RequestHead::trailers([['X-Upper', '1']]));
    }

    public function testResponseFields(): void
    {
        $fields = RequestHead::responseFields(new Response(201, ['Content-Type' => 'text/plain', 'Connection' => 'close', 'Set-Cookie' => ['a=1', 'b=2'], 'Content-Length' => '999'], 'hello'), 'DATE');
        self::assertSame([[':status', '201'], ['content-type', 'text/plain'], ['set-cookie', 'a=1'], ['set-cookie', 'b=2'], ['server', 'weft'], ['date', 'DATE'], ['content-length', '5']], $fields);
        // A streamed body keeps its declared length; the application's own Server and Date win.
        $fields = RequestHead::responseFields(Response::stream(static function (): void {}, 200, ['Content-Length' => '10', 'Server' => 'mine', 'Date' => 'D']), 'DATE');
        self::assertSame([[':status', '200'], ['content-length', '10'], ['server', 'mine'], ['date', 'D']], $fields);
        self::assertSame([[':status', '304'], ['server', 'weft'], ['date', 'DATE']], RequestHead::responseFields(new Response(304), 'DATE'));
        foreach (["a\r\nb", "a\nX-Injected: b", "a\0b", "a\rb"] as $bad) {
            try {
                RequestHead::responseFields(new Response(200, ['X-Bad' => $bad]), 'DATE');
                self::fail('accepted ' . \json_encode($bad));
            } catch (\InvalidArgumentException $e) {
                self::assertStringContainsString('Invalid response header "X-Bad"', $e->getMessage());
            }
        }
        $this->expectException(\InvalidArgumentException::class);
        RequestHead::responseFields(new Response(200, ['Bad Name' => 'x']), 'DATE');
    }
}
