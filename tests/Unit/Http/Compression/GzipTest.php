<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Compression;

use PHPUnit\Framework\TestCase;
use Weft\Http\Compression\Gzip;
use Weft\Http\Compression\GzipOptions;
use Weft\Http\Message\BodyWriter;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;

final class GzipTest extends TestCase
{
    public function testAcceptsGzip(): void
    {
        self::assertTrue(Gzip::acceptsGzip('gzip'));
        self::assertTrue(Gzip::acceptsGzip('deflate, x-gzip;q=0.1'));
        self::assertTrue(Gzip::acceptsGzip('*'));
        self::assertTrue(Gzip::acceptsGzip('gzip;q=1.000'));
        self::assertFalse(Gzip::acceptsGzip('gzip;q=0'));
        self::assertFalse(Gzip::acceptsGzip('gzip;q=0, *;q=1'));
        self::assertFalse(Gzip::acceptsGzip('identity'));
        self::assertFalse(Gzip::acceptsGzip('gzip;q=1.5'));
        self::assertFalse(Gzip::acceptsGzip(''));
    }

    public function testStringBodyAndHeaders(): void
    {
        $body = \str_repeat('{"hello":"world"}', 100);
        $gzip = new Gzip(static fn (): Response => new Response(200, ['Content-Type' => 'application/json', 'ETag' => '"v1"', 'Vary' => 'Cookie', 'Content-Length' => '1700'], $body));
        $response = $gzip(Request::create('GET', '/', ['Accept-Encoding' => 'gzip']));
        self::assertSame('gzip', $response->header('content-encoding'));
        self::assertSame('Cookie, Accept-Encoding', $response->header('vary'));
        self::assertSame('W/"v1"', $response->header('etag'));
        self::assertFalse($response->hasHeader('content-length'));
        self::assertSame($body, \gzdecode($response->body()));

        $plain = $gzip(Request::create('GET', '/'));
        self::assertSame([$body, 'Cookie, Accept-Encoding', '"v1"'], [$plain->body(), $plain->header('vary'), $plain->header('etag')]);
    }

    public function testStreamedBodyKeepsStatusAndReason(): void
    {
        $gzip = new Gzip(static fn (): Response => Response::stream(static function (BodyWriter $out): void {
            $out->write('first ');
            $out->write('');
            $out->write('second');
        }, 202, ['Content-Type' => 'text/plain'])->withStatus(202, 'Queued'), new GzipOptions(minLength: 5000));
        $response = $gzip(Request::create('GET', '/', ['Accept-Encoding' => 'gzip']));
        self::assertSame([202, 'Queued', 'gzip'], [$response->status(), $response->reason(), $response->header('content-encoding')]);
        $writer = new class () implements BodyWriter {
            public string $bytes = '';
            public int $writes = 0;

            public function write(string $chunk): void
            {
                $this->bytes .= $chunk;
                $this->writes++;
            }
        };
        ($response->producer())($writer);
        self::assertSame(3, $writer->writes, 'one flushed write per non-empty write, plus the trailer');
        self::assertSame('first second', \gzdecode($writer->bytes));
    }

    public function testTypeListPatternsAndTheNeverList(): void
    {
        $body = \str_repeat('x', 2000);
        $gzip = new Gzip(static fn (Request $r): Response => new Response(200, ['Content-Type' => (string) $r->header('x-type')], $body), new GzipOptions(types: ['*/*']));
        foreach (['text/plain' => 'gzip', 'application/x-anything' => 'gzip', 'image/png' => null, 'video/mp4' => null, 'font/woff2' => null, 'application/zip' => null] as $type => $expected) {
            $response = $gzip(Request::create('GET', '/', ['Accept-Encoding' => 'gzip', 'X-Type' => $type]));
            self::assertSame($expected, $response->header('content-encoding'), $type);
        }
    }
}
