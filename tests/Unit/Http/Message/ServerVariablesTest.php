<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Message;

use PHPUnit\Framework\TestCase;
use Weft\Http\Message\Request;
use Weft\Http\Message\ServerVariables;

/** One description of a request as $_SERVER, for the PSR-7 server parameters and HttpFoundation's server bag. */
final class ServerVariablesTest extends TestCase
{
    public function testTheCgiVariablesAndOneEntryPerField(): void
    {
        $request = Request::create('POST', '/a?b=1', ['Host' => 'h:8080', 'Content-Type' => 'text/plain', 'X-Many' => ['1', '2']], 'body', '1.0')
            ->withRemoteAddress('10.0.0.1');
        self::assertSame([
            'REQUEST_METHOD' => 'POST',
            'REQUEST_URI' => '/a?b=1',
            'QUERY_STRING' => 'b=1',
            'SERVER_PROTOCOL' => 'HTTP/1.0',
            'REQUEST_TIME' => 1700000000,
            'REQUEST_TIME_FLOAT' => 1700000000.5,
            'REMOTE_ADDR' => '10.0.0.1',
            'HTTP_HOST' => 'h:8080',
            'CONTENT_TYPE' => 'text/plain',
            'HTTP_X_MANY' => '1, 2',
        ], ServerVariables::of($request, $request->headers(), 1700000000.5));
    }

    public function testAnUnknownPeerHasNoAddressAndHttpsIsSaid(): void
    {
        $request = Request::create('GET', '/')->withForwardedClient('203.0.113.9', 'https')->withRemoteAddress(null);
        $server = ServerVariables::of($request, [], 1.0);
        self::assertArrayNotHasKey('REMOTE_ADDR', $server);
        self::assertSame('on', $server['HTTPS']);
    }
}
