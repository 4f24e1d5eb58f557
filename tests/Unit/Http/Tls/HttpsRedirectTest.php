<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Tls;

use PHPUnit\Framework\TestCase;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Tls\Hsts;
use Weft\Http\Tls\HttpsRedirect;

final class HttpsRedirectTest extends TestCase
{
    public function testSameHostAndTargetOnTheHttpsPort(): void
    {
        $response = (new HttpsRedirect(8443))(Request::create('GET', '/a/b?c=d', ['Host' => 'Example.org:8080']));
        self::assertSame(301, $response->status());
        self::assertSame('https://example.org:8443/a/b?c=d', $response->header('location'));
        $response = (new HttpsRedirect(443))(Request::create('POST', '/form', ['Host' => '[::1]:80']));
        self::assertSame(308, $response->status(), 'keeps the method and body');
        self::assertSame('https://[::1]/form', $response->header('location'));
    }

    public function testNoUsableHostIs400(): void
    {
        foreach (['', 'evil.example/path', 'a b', 'x@y'] as $host) {
            self::assertSame(400, (new HttpsRedirect(443))(Request::create('GET', '/', $host === '' ? [] : ['Host' => $host]))->status(), $host);
        }
    }

    public function testHstsOnlyOverHttpsAndNeverOverTheApplicationsOwn(): void
    {
        $hsts = new Hsts(static fn (Request $r): Response => new Response(200, $r->path() === '/own' ? ['Strict-Transport-Security' => 'max-age=1'] : []), 600, true);
        self::assertSame('max-age=600; includeSubDomains', $hsts(Request::create('GET', '/')->overTls())->header('strict-transport-security'));
        self::assertNull($hsts(Request::create('GET', '/'))->header('strict-transport-security'));
        self::assertSame('max-age=1', $hsts(Request::create('GET', '/own')->overTls())->header('strict-transport-security'));
    }
}
