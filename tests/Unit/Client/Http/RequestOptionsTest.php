<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Client\Http;

use PHPUnit\Framework\TestCase;
use Weft\Client\Http\RequestOptions;
use Weft\Client\Http\Response;

final class RequestOptionsTest extends TestCase
{
    public function testDefaultsAndCopies(): void
    {
        $defaults = RequestOptions::defaults();
        self::assertSame(
            [10.0, 30.0, 5, true, null, true, 32 * 1024 * 1024, true],
            [$defaults->connectTimeout, $defaults->timeout, $defaults->maxRedirects, $defaults->verifyPeer,
             $defaults->caFile, $defaults->decodeContent, $defaults->maxBodyBytes, $defaults->keepAlive],
        );
        $changed = $defaults->withConnectTimeout(1.5)->withTimeout(null)->withMaxRedirects(0)->withVerifyPeer(false)
            ->withCaFile('/ca.pem')->withDecodeContent(false)->withMaxBodyBytes(10)->withKeepAlive(false);
        self::assertSame(
            [1.5, null, 0, false, '/ca.pem', false, 10, false],
            [$changed->connectTimeout, $changed->timeout, $changed->maxRedirects, $changed->verifyPeer,
             $changed->caFile, $changed->decodeContent, $changed->maxBodyBytes, $changed->keepAlive],
        );
        self::assertSame(10.0, $defaults->connectTimeout, 'withX() returns a copy');
    }

    public function testTlsContext(): void
    {
        self::assertSame(
            ['verify_peer' => true, 'verify_peer_name' => true, 'allow_self_signed' => false],
            RequestOptions::defaults()->tlsContext(),
        );
        self::assertSame(
            ['verify_peer' => false, 'verify_peer_name' => false, 'allow_self_signed' => true, 'cafile' => '/ca.pem'],
            RequestOptions::defaults()->withVerifyPeer(false)->withCaFile('/ca.pem')->tlsContext(),
        );
    }

    public function testValidation(): void
    {
        foreach ([
            static fn () => RequestOptions::defaults()->withConnectTimeout(0),
            static fn () => RequestOptions::defaults()->withTimeout(-1.0),
            static fn () => RequestOptions::defaults()->withMaxRedirects(-1),
            static fn () => RequestOptions::defaults()->withMaxBodyBytes(-1),
        ] as $i => $call) {
            try {
                $call();
                self::fail("case $i accepted");
            } catch (\InvalidArgumentException) {
                self::addToAssertionCount(1);
            }
        }
    }

    public function testResponseHeadersAreCaseInsensitive(): void
    {
        $response = new Response(200, 'OK', ['set-cookie' => ['a=1', 'b=2'], 'content-type' => ['application/json']], '{"a":[1]}', 'http://h/');
        self::assertSame('a=1, b=2', $response->header('Set-Cookie'));
        self::assertSame(['a=1', 'b=2'], $response->headerValues('SET-COOKIE'));
        self::assertTrue($response->hasHeader('Content-Type'));
        self::assertSame([], $response->headerValues('x'));
        self::assertSame(['a' => [1]], $response->json());
        $this->expectException(\JsonException::class);
        (new Response(200, 'OK', [], 'not json', 'http://h/'))->json();
    }
}
