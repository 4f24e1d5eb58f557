<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Mode\Fpm;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Mode\Fpm\SapiRequestFactory;

final class SapiRequestFactoryTest extends TestCase
{
    /** What nginx sends for "GET /path?q=1 HTTP/1.1" with the fastcgi_params fpm mode writes. */
    private static function server(array $overrides = []): array
    {
        return $overrides + [
            'QUERY_STRING' => 'q=1',
            'REQUEST_METHOD' => 'GET',
            'CONTENT_TYPE' => '',
            'CONTENT_LENGTH' => '',
            'SCRIPT_NAME' => '/index.php',
            'SCRIPT_FILENAME' => '/srv/weft/src/Mode/Fpm/front.php',
            'REQUEST_URI' => '/path?q=1',
            'DOCUMENT_URI' => '/path',
            'SERVER_PROTOCOL' => 'HTTP/1.1',
            'GATEWAY_INTERFACE' => 'CGI/1.1',
            'REMOTE_ADDR' => '127.0.0.1',
            'REMOTE_PORT' => '50000',
            'SERVER_PORT' => '8080',
            'REDIRECT_STATUS' => '200',
            'WEFT_APP' => '/srv/app.php',
            'HTTP_HOST' => 'localhost:8080',
            'HTTP_USER_AGENT' => 'test',
            'PHP_SELF' => '/index.php',
            'REQUEST_TIME' => 1700000000,
            'argv' => [],
        ];
    }

    /** @return iterable<string, array{string}> */
    public static function methods(): iterable
    {
        foreach (['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND'] as $method) {
            yield $method => [$method];
        }
    }

    #[DataProvider('methods')]
    public function testMethodComesFromRequestMethod(string $method): void
    {
        $request = SapiRequestFactory::fromGlobals(self::server(['REQUEST_METHOD' => $method]));
        self::assertSame($method, $request->method());
    }

    public function testTargetPathAndQueryComeFromRequestUri(): void
    {
        $request = SapiRequestFactory::fromGlobals(self::server([
            'REQUEST_URI' => '/a%20b/c?x=1&y[]=2&y[]=3',
            'QUERY_STRING' => 'x=1&y[]=2&y[]=3',
        ]));
        self::assertSame('/a%20b/c?x=1&y[]=2&y[]=3', $request->target());
        self::assertSame('/a%20b/c', $request->path());
        self::assertSame('x=1&y[]=2&y[]=3', $request->queryString());
        self::assertSame(['x' => '1', 'y' => ['2', '3']], $request->query());
    }

    public function testTargetIsRebuiltWithoutRequestUri(): void
    {
        $server = self::server(['SCRIPT_NAME' => '/index.php', 'PATH_INFO' => '/more', 'QUERY_STRING' => 'a=b']);
        unset($server['REQUEST_URI']);
        self::assertSame('/index.php/more?a=b', SapiRequestFactory::fromGlobals($server)->target());
        self::assertSame('/', SapiRequestFactory::fromGlobals(['REQUEST_METHOD' => 'GET'])->target());
    }

    public function testVersionComesFromServerProtocol(): void
    {
        self::assertSame('1.1', SapiRequestFactory::fromGlobals(self::server())->version());
        self::assertSame('1.0', SapiRequestFactory::fromGlobals(self::server(['SERVER_PROTOCOL' => 'HTTP/1.0']))->version());
        self::assertSame('2.0', SapiRequestFactory::fromGlobals(self::server(['SERVER_PROTOCOL' => 'HTTP/2.0']))->version());
        self::assertFalse(SapiRequestFactory::fromGlobals(self::server(['SERVER_PROTOCOL' => 'HTTP/1.0']))->keepAlive());
    }

    public function testHeadersComeFromHttpVariables(): void
    {
        $request = SapiRequestFactory::fromGlobals(self::server([
            'HTTP_ACCEPT_LANGUAGE' => 'en, de;q=0.5',
            'HTTP_X_REQUEST_ID' => 'abc',
            'HTTP_X_EMPTY' => '',
        ]));
        self::assertSame('localhost:8080', $request->header('Host'));
        self::assertSame('en, de;q=0.5', $request->header('accept-language'));
        self::assertSame('abc', $request->header('X-Request-Id'));
        self::assertSame('', $request->header('x-empty'));
        $headers = $request->headers();
        self::assertSame(['accept-language', 'x-request-id', 'x-empty', 'host', 'user-agent'], \array_keys($headers), 'in $_SERVER order');
        self::assertArrayNotHasKey('script-filename', $headers);
        self::assertArrayNotHasKey('content-type', $headers, 'nginx sends CONTENT_TYPE empty when there is none');
        self::assertArrayNotHasKey('content-length', $headers);
    }

    public function testContentTypeAndLengthComeFromTheirCgiVariablesOnce(): void
    {
        // nginx passes both the CGI variables and the request's own header fields as HTTP_*.
        $request = SapiRequestFactory::fromGlobals(self::server([
            'REQUEST_METHOD' => 'POST',
            'CONTENT_TYPE' => 'application/json; charset=utf-8',
            'CONTENT_LENGTH' => '13',
            'HTTP_CONTENT_TYPE' => 'application/json; charset=utf-8',
            'HTTP_CONTENT_LENGTH' => '13',
        ]), '{"a":[1,2,3]}');
        self::assertSame(['application/json; charset=utf-8'], $request->headers()['content-type']);
        self::assertSame(['13'], $request->headers()['content-length']);
        self::assertSame('application/json', $request->contentType());
        self::assertSame(['a' => [1, 2, 3]], $request->json());
    }

    public function testContentTypeWithoutTheCgiVariableStillCounts(): void
    {
        $request = SapiRequestFactory::fromGlobals(['REQUEST_METHOD' => 'POST', 'HTTP_CONTENT_TYPE' => 'text/plain']);
        self::assertSame('text/plain', $request->header('content-type'));
    }

    public function testBodyAndFormFields(): void
    {
        $request = SapiRequestFactory::fromGlobals(self::server([
            'REQUEST_METHOD' => 'POST',
            'CONTENT_TYPE' => 'application/x-www-form-urlencoded',
            'CONTENT_LENGTH' => '15',
        ]), 'a=1&b%5B%5D=x+y');
        self::assertSame('a=1&b%5B%5D=x+y', $request->body());
        self::assertSame(['a' => '1', 'b' => ['x y']], $request->form());
    }

    public function testMultipartBodyIsParsedByTheRequest(): void
    {
        $body = "--XX\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nfile data\r\n"
            . "--XX\r\nContent-Disposition: form-data; name=\"g\"\r\n\r\nv\r\n--XX--\r\n";
        $request = SapiRequestFactory::fromGlobals(self::server([
            'REQUEST_METHOD' => 'POST',
            'CONTENT_TYPE' => 'multipart/form-data; boundary=XX',
            'CONTENT_LENGTH' => (string) \strlen($body),
        ]), $body);
        self::assertSame(['g' => 'v'], $request->form());
        self::assertSame('a.txt', $request->files()['f']->clientFilename);
    }

    public function testCookies(): void
    {
        $request = SapiRequestFactory::fromGlobals(self::server(['HTTP_COOKIE' => 'sid=a%2Bb; theme=dark; sid=second']));
        self::assertSame(['sid' => 'a+b', 'theme' => 'dark'], $request->cookies());
        self::assertSame('dark', $request->cookie('theme'));
    }

    public function testRemoteAddress(): void
    {
        self::assertSame('127.0.0.1', SapiRequestFactory::fromGlobals(self::server())->remoteAddress());
        self::assertSame('::1', SapiRequestFactory::fromGlobals(self::server(['REMOTE_ADDR' => '::1']))->remoteAddress());
        self::assertNull(SapiRequestFactory::fromGlobals(self::server(['REMOTE_ADDR' => '']))->remoteAddress());
        $server = self::server();
        unset($server['REMOTE_ADDR']);
        self::assertNull(SapiRequestFactory::fromGlobals($server)->remoteAddress());
    }

    public function testAFieldThatCouldNotComeOffTheWireIsDropped(): void
    {
        $request = SapiRequestFactory::fromGlobals(self::server(['HTTP_X_BAD' => "a\r\nInjected: yes", 'HTTP_X_GOOD' => 'ok']));
        self::assertNull($request->header('x-bad'));
        self::assertNull($request->header('injected'));
        self::assertSame('ok', $request->header('x-good'));
    }

    public function testMissingMethodIsGet(): void
    {
        self::assertSame('GET', SapiRequestFactory::fromGlobals([])->method());
    }
}
