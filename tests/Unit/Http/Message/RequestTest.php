<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Message;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Http\Message\BadRequest;
use Weft\Http\Message\Request;
use Weft\Http\Message\UploadedFile;
use Weft\Http\Parser\RequestParser;

final class RequestTest extends TestCase
{
    public function testCreateNormalisesHeaders(): void
    {
        $request = Request::create('POST', '/x', [
            'Content-Type' => 'text/plain',
            'X-List' => ['a', 'b'],
            'X-Number' => 42,
            'x-spaced' => '  v  ',
        ], 'body', 'HTTP/1.0');
        self::assertSame('POST', $request->method());
        self::assertSame('/x', $request->target());
        self::assertSame('1.0', $request->version());
        self::assertSame('body', $request->body());
        self::assertSame([
            'content-type' => ['text/plain'],
            'x-list' => ['a', 'b'],
            'x-number' => ['42'],
            'x-spaced' => ['v'],
        ], $request->headers());
        self::assertSame('a, b', $request->header('X-LIST'));
        self::assertSame('text/plain', $request->header('content-type'));
        self::assertNull($request->header('missing'));
        self::assertTrue($request->hasHeader('x-number'));
        self::assertFalse($request->hasHeader('missing'));
        self::assertNull(Request::create('GET', '/')->header('host'));
        self::assertSame([], Request::create('GET', '/')->headers());
    }

    /** @return iterable<string, array{array<string, mixed>}> */
    public static function invalidHeaders(): iterable
    {
        yield 'CRLF injection' => [['X-A' => "a\r\nX-Injected: 1"]];
        yield 'LF in value' => [['X-A' => "a\nb"]];
        yield 'NUL in value' => [['X-A' => "a\0b"]];
        yield 'space in name' => [['X A' => 'b']];
        yield 'colon in name' => [['X:A' => 'b']];
        yield 'empty name' => [['' => 'b']];
    }

    /** @param array<string, mixed> $headers */
    #[DataProvider('invalidHeaders')]
    public function testCreateRejectsHeadersThatCouldNotComeOffTheWire(array $headers): void
    {
        $this->expectException(\InvalidArgumentException::class);
        Request::create('GET', '/', $headers);
    }

    public function testHeaderLookupIgnoresNamesThatAreNotFieldNames(): void
    {
        $request = Request::create('GET', '/', ['A' => 'b: c']);
        self::assertSame('b: c', $request->header('a'));
        self::assertNull($request->header('a:b'));
        self::assertFalse($request->hasHeader('a:b'));
    }

    public function testHeaderLookupsAgreeBeforeAndAfterTheMapIsBuilt(): void
    {
        $request = Request::create('GET', '/', ['Accept' => ['a', 'b'], 'Host' => 'h']);
        $before = [$request->header('accept'), $request->header('HOST'), $request->header('nope')];
        $request->headers();
        self::assertSame($before, [$request->header('accept'), $request->header('HOST'), $request->header('nope')]);
        self::assertSame(['a, b', 'h', null], $before);
    }

    /** @return iterable<string, array{string, string, string}> */
    public static function targets(): iterable
    {
        yield 'origin' => ['/a/b%20c', '/a/b%20c', ''];
        yield 'origin with query' => ['/search?q=a+b&x=1', '/search', 'q=a+b&x=1'];
        yield 'empty query' => ['/p?', '/p', ''];
        yield 'absolute' => ['http://example.com/a/b?c=d', '/a/b', 'c=d'];
        yield 'absolute without path' => ['http://example.com', '/', ''];
        yield 'absolute with query only' => ['http://example.com?x=1', '/', 'x=1'];
        yield 'asterisk' => ['*', '*', ''];
        yield 'authority' => ['example.com:443', '', ''];
    }

    #[DataProvider('targets')]
    public function testPathAndQueryString(string $target, string $path, string $query): void
    {
        $request = Request::create('GET', $target);
        self::assertSame($path, $request->path());
        self::assertSame($query, $request->queryString());
    }

    public function testQueryFollowsParseStrSemantics(): void
    {
        $request = Request::create('GET', '/?a=1&b[]=2&b[]=3&c[k]=v&d.e=f&enc=%C3%A9+x&flag');
        $expected = [];
        parse_str('a=1&b[]=2&b[]=3&c[k]=v&d.e=f&enc=%C3%A9+x&flag', $expected);
        self::assertSame($expected, $request->query());
        self::assertSame('1', $request->queryParam('a'));
        self::assertSame(['2', '3'], $request->queryParam('b'));
        self::assertSame('f', $request->queryParam('d_e'));
        self::assertSame('é x', $request->queryParam('enc'));
        self::assertSame('', $request->queryParam('flag'));
        self::assertSame('fallback', $request->queryParam('missing', 'fallback'));
        self::assertSame([], Request::create('GET', '/')->query());
    }

    public function testDerivedValuesAreComputedLazily(): void
    {
        $parser = new RequestParser();
        $parser->push("POST /?a=1 HTTP/1.1\r\nHost: x\r\nCookie: c=1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
        $request = $parser->next();
        self::assertInstanceOf(Request::class, $request);
        $cache = static fn (string $property): mixed => (new \ReflectionProperty(Request::class, $property))->getValue($request);
        foreach (['headerMap', 'query', 'cookies', 'form', 'files', 'json'] as $property) {
            self::assertNull($cache($property), "$property before use");
        }
        $request->header('cookie');
        self::assertNull($cache('headerMap'), 'one lookup does not build the map');
        $request->query();
        $request->cookies();
        $request->json();
        self::assertSame(['a' => '1'], $cache('query'));
        self::assertSame(['c' => '1'], $cache('cookies'));
        self::assertSame([], $cache('json'));
    }

    public function testCookies(): void
    {
        $request = Request::create('GET', '/', ['Cookie' => [
            'session=abc+/=; theme="dark"; enc=caf%C3%A9; empty=; flag; session=second',
            'other=1',
        ]]);
        self::assertSame([
            'session' => 'abc+/=',
            'theme' => 'dark',
            'enc' => 'café',
            'empty' => '',
            'flag' => '',
            'other' => '1',
        ], $request->cookies());
        self::assertSame('abc+/=', $request->cookie('session'));
        self::assertNull($request->cookie('missing'));
        self::assertSame([], Request::create('GET', '/')->cookies());
    }

    public function testUrlencodedForm(): void
    {
        $request = Request::create('POST', '/', ['Content-Type' => 'application/x-www-form-urlencoded; charset=UTF-8'], 'name=J%C3%B6rg&tags[]=a&tags[]=b&n[x]=1');
        self::assertSame(['name' => 'Jörg', 'tags' => ['a', 'b'], 'n' => ['x' => '1']], $request->form());
        self::assertSame([], $request->files());
    }

    public function testOtherBodiesHaveNoForm(): void
    {
        self::assertSame([], Request::create('POST', '/', ['Content-Type' => 'text/plain'], 'a=b')->form());
        self::assertSame([], Request::create('POST', '/', [], 'a=b')->form());
    }

    public function testMultipartForm(): void
    {
        $body = "preamble to ignore\r\n"
            . "--XyZ\r\n"
            . "Content-Disposition: form-data; name=\"title\"\r\n\r\n"
            . "Hello\r\nWorld\r\n"
            . "--XyZ\r\n"
            . "Content-Disposition: form-data; name=\"tags[]\"\r\n\r\n"
            . "a\r\n"
            . "--XyZ\r\n"
            . "content-disposition: form-data; name=\"tags[]\"\r\n\r\n"
            . "b\r\n"
            . "--XyZ\r\n"
            . "Content-Disposition: form-data; name=\"avatar\"; filename=\"C:\\\\Users\\\\me\\\\face.png\"\r\n"
            . "Content-Type: image/png\r\n\r\n"
            . "\x89PNG\r\n\x1a\n--XyZ-not-a-boundary\r\n"
            . "--XyZ\r\n"
            . "Content-Disposition: form-data; name=\"docs[]\"; filename=\"a; name=fake.txt\"\r\n\r\n"
            . "first\r\n"
            . "--XyZ\r\n"
            . "Content-Disposition: form-data; name=\"docs[]\"; filename=\"b.txt\"\r\n"
            . "Content-Type: text/plain\r\n\r\n"
            . "second\r\n"
            . "--XyZ\r\n"
            . "Content-Disposition: form-data; name=\"nothing\"; filename=\"\"\r\n"
            . "Content-Type: application/octet-stream\r\n\r\n"
            . "\r\n"
            . "--XyZ\r\n"
            . "Content-Disposition: form-data\r\n\r\n"
            . "nameless part is dropped\r\n"
            . "--XyZ--\r\n"
            . "epilogue to ignore";
        $request = Request::create('POST', '/upload', ['Content-Type' => 'multipart/form-data; boundary="XyZ"'], $body);

        self::assertSame(['title' => "Hello\r\nWorld", 'tags' => ['a', 'b']], $request->form());
        $files = $request->files();
        self::assertSame(['avatar', 'docs', 'nothing'], array_keys($files));

        $avatar = $files['avatar'];
        self::assertInstanceOf(UploadedFile::class, $avatar);
        self::assertSame('face.png', $avatar->clientFilename);
        self::assertSame('image/png', $avatar->clientMediaType);
        self::assertSame("\x89PNG\r\n\x1a\n--XyZ-not-a-boundary", $avatar->contents);
        self::assertSame(\strlen($avatar->contents), $avatar->size);
        self::assertFalse($avatar->isEmpty());

        self::assertIsArray($files['docs']);
        [$first, $second] = $files['docs'];
        self::assertInstanceOf(UploadedFile::class, $first);
        self::assertInstanceOf(UploadedFile::class, $second);
        self::assertSame('a; name=fake.txt', $first->clientFilename);
        self::assertSame('application/octet-stream', $first->clientMediaType);
        self::assertSame('first', $first->contents);
        self::assertSame('b.txt', $second->clientFilename);
        self::assertSame('second', $second->contents);

        self::assertInstanceOf(UploadedFile::class, $files['nothing']);
        self::assertTrue($files['nothing']->isEmpty());
    }

    public function testMultipartWithUnquotedBoundaryAndEmptyParts(): void
    {
        $body = "--b\r\nContent-Disposition: form-data; name=a\r\n\r\n\r\n--b\r\nContent-Disposition: form-data; name=\"q\\\"uote\"\r\n\r\nx\r\n--b--";
        $request = Request::create('POST', '/', ['Content-Type' => 'multipart/form-data; charset=utf-8; boundary=b'], $body);
        self::assertSame(['a' => '', 'q"uote' => 'x'], $request->form());
    }

    /** @return iterable<string, array{string, string}> */
    public static function brokenMultipart(): iterable
    {
        yield 'no boundary parameter' => ['multipart/form-data', "--b\r\n\r\nx\r\n--b--"];
        yield 'no opening boundary' => ['multipart/form-data; boundary=b', 'just text'];
        yield 'no closing boundary' => ['multipart/form-data; boundary=b', "--b\r\nContent-Disposition: form-data; name=a\r\n\r\nvalue"];
        yield 'unterminated part head' => ['multipart/form-data; boundary=b', "--b\r\nContent-Disposition: form-data; name=a"];
        yield 'garbage after boundary' => ['multipart/form-data; boundary=b', "--bX\r\n\r\nx\r\n--b--"];
    }

    #[DataProvider('brokenMultipart')]
    public function testBrokenMultipartIsABadRequestEveryTime(string $type, string $body): void
    {
        $request = Request::create('POST', '/', ['Content-Type' => $type], $body);
        foreach (['form', 'files', 'form'] as $method) {
            try {
                $request->$method();
                self::fail('Expected BadRequest from ' . $method);
            } catch (BadRequest $e) {
                self::assertSame(400, $e->status);
                self::assertStringContainsString('multipart', $e->getMessage());
            }
        }
    }

    public function testJson(): void
    {
        $request = Request::create('POST', '/', ['Content-Type' => 'application/json'], '{"a":[1,2],"b":{"c":null}}');
        self::assertSame(['a' => [1, 2], 'b' => ['c' => null]], $request->json());
        self::assertSame($request->json(), $request->json());
        self::assertNull(Request::create('POST', '/')->json());
        self::assertSame(3, Request::create('POST', '/', [], '3')->json());
    }

    public function testInvalidJsonIsABadRequest(): void
    {
        $request = Request::create('POST', '/', [], '{"a":');
        try {
            $request->json();
            self::fail('Expected BadRequest');
        } catch (BadRequest $e) {
            self::assertSame(400, $e->status);
            self::assertInstanceOf(\JsonException::class, $e->getPrevious());
        }
        $this->expectException(BadRequest::class);
        $request->json();
    }

    public function testContentType(): void
    {
        self::assertSame('text/html', Request::create('GET', '/', ['Content-Type' => ' Text/HTML ; charset=utf-8'])->contentType());
        self::assertSame('', Request::create('GET', '/')->contentType());
    }

    public function testRemoteAddressAndAttributesAreImmutable(): void
    {
        $request = Request::create('GET', '/');
        self::assertNull($request->remoteAddress());
        $withAddress = $request->withRemoteAddress('::1');
        self::assertSame('::1', $withAddress->remoteAddress());
        self::assertNull($request->remoteAddress());

        $withAttribute = $request->withAttribute('user', 42)->withAttribute('nullable', null);
        self::assertSame(42, $withAttribute->attribute('user'));
        self::assertNull($withAttribute->attribute('nullable', 'default'), 'a stored null is not missing');
        self::assertSame('default', $withAttribute->attribute('missing', 'default'));
        self::assertSame(['user' => 42, 'nullable' => null], $withAttribute->attributes());
        self::assertSame([], $request->attributes());
        self::assertSame(['nullable' => null], $withAttribute->withoutAttribute('user')->attributes());
    }

    public function testTrailersStayApartFromHeaders(): void
    {
        $parser = new RequestParser();
        $parser->push("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\nContent-Length: 99\r\nX-Sum: 1\r\n\r\n");
        $request = $parser->next();
        self::assertInstanceOf(Request::class, $request);
        self::assertNull($request->header('content-length'));
        self::assertNull($request->header('x-sum'));
        self::assertSame(['content-length' => ['99'], 'x-sum' => ['1']], $request->trailers());
        self::assertSame([], Request::create('GET', '/')->trailers());
    }

    public function testWithForwardedClientKeepsThePeer(): void
    {
        $request = Request::create('GET', '/')->withRemoteAddress('127.0.0.1');
        self::assertSame(['127.0.0.1', '127.0.0.1', 'http', false], [$request->remoteAddress(), $request->peerAddress(), $request->scheme(), $request->viaTrustedProxy()]);
        $forwarded = $request->withForwardedClient('203.0.113.7', 'https');
        self::assertSame(['203.0.113.7', '127.0.0.1', 'https', true], [$forwarded->remoteAddress(), $forwarded->peerAddress(), $forwarded->scheme(), $forwarded->viaTrustedProxy()]);
        self::assertSame(['127.0.0.1', 'http'], [$request->remoteAddress(), $request->scheme()], 'a copy: the original is unchanged');
        // A second resolution keeps the connection's peer, not the first client.
        self::assertSame('127.0.0.1', $forwarded->withForwardedClient('198.51.100.1')->peerAddress());
        $this->expectException(\InvalidArgumentException::class);
        $request->withForwardedClient('203.0.113.7', 'ftp');
    }
}
