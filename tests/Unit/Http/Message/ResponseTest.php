<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Message;

use PHPUnit\Framework\TestCase;
use Weft\Http\Message\BodyWriter;
use Weft\Http\Message\Response;

final class ResponseTest extends TestCase
{
    public function testDefaults(): void
    {
        $response = new Response();
        self::assertSame(200, $response->status());
        self::assertSame('OK', $response->reason());
        self::assertSame([], $response->headers());
        self::assertSame('', $response->body());
        self::assertFalse($response->isStreamed());
        self::assertNull($response->producer());
        self::assertFalse($response->hasCustomReason());
    }

    public function testHeadersAreLookedUpCaseInsensitively(): void
    {
        $response = new Response(201, ['Content-Type' => 'text/plain', 'Set-Cookie' => ['a=1', 'b=2'], 'X-Int' => 7], 'made');
        self::assertSame('text/plain', $response->header('content-type'));
        self::assertSame('a=1, b=2', $response->header('SET-COOKIE'));
        self::assertSame('7', $response->header('x-int'));
        self::assertNull($response->header('missing'));
        self::assertTrue($response->hasHeader('x-INT'));
        self::assertFalse($response->hasHeader('missing'));
        self::assertSame(['Content-Type' => ['text/plain'], 'Set-Cookie' => ['a=1', 'b=2'], 'X-Int' => ['7']], $response->headers());
        self::assertSame('Created', $response->reason());
    }

    public function testWithersReturnCopies(): void
    {
        $original = new Response(200, ['content-type' => 'text/plain', 'X-A' => '1'], 'one');
        $changed = $original->withHeader('Content-Type', 'text/html')
            ->withAddedHeader('x-a', '2')
            ->withAddedHeader('X-New', ['n'])
            ->withStatus(418, 'Short and stout')
            ->withBody('two');
        self::assertSame(['X-A' => ['1', '2'], 'Content-Type' => ['text/html'], 'X-New' => ['n']], $changed->headers());
        self::assertSame(418, $changed->status());
        self::assertSame('Short and stout', $changed->reason());
        self::assertTrue($changed->hasCustomReason());
        self::assertSame('two', $changed->body());
        self::assertSame(['content-type' => ['text/plain'], 'X-A' => ['1']], $original->headers());
        self::assertSame([], $changed->withoutHeader('x-a')->withoutHeader('CONTENT-type')->withoutHeader('x-new')->headers());
        self::assertSame("I'm a teapot", $changed->withStatus(418)->reason());
        self::assertSame('', (new Response(299))->reason());
    }

    public function testInvalidStatusOrReason(): void
    {
        foreach ([99, 600, 0] as $status) {
            try {
                new Response($status);
                self::fail("status $status accepted");
            } catch (\InvalidArgumentException) {
                self::assertTrue(true);
            }
        }
        $this->expectException(\InvalidArgumentException::class);
        (new Response())->withStatus(200, "OK\r\nX-Injected: 1");
    }

    public function testJsonAndText(): void
    {
        $json = Response::json(['path' => '/a/b', 'name' => 'café', 'n' => 1], 201, ['X-A' => 'b']);
        self::assertSame(201, $json->status());
        self::assertSame('{"path":"/a/b","name":"café","n":1}', $json->body());
        self::assertSame('application/json', $json->header('content-type'));
        self::assertSame('b', $json->header('x-a'));
        self::assertSame('text/csv', Response::json([], 200, ['Content-Type' => 'text/csv'])->header('content-type'));

        $text = Response::text('hi', 404);
        self::assertSame(404, $text->status());
        self::assertSame('hi', $text->body());
        self::assertSame('text/plain; charset=utf-8', $text->header('content-type'));

        $this->expectException(\JsonException::class);
        Response::json(NAN);
    }

    public function testStream(): void
    {
        $response = Response::stream(static function (BodyWriter $writer): void {
            $writer->write('a');
            $writer->write('b');
        }, 202, ['Content-Type' => 'text/event-stream']);
        self::assertTrue($response->isStreamed());
        self::assertSame(202, $response->status());
        self::assertSame('', $response->body());
        $writer = new class () implements BodyWriter {
            public string $written = '';

            public function write(string $chunk): void
            {
                $this->written .= $chunk;
            }
        };
        $producer = $response->producer();
        self::assertNotNull($producer);
        $producer($writer);
        self::assertSame('ab', $writer->written);
        self::assertFalse($response->withBody('x')->isStreamed());
    }

    public function testTrailers(): void
    {
        $response = new Response(200, [], 'body');
        self::assertFalse($response->hasTrailers());
        self::assertNull($response->trailers());
        self::assertSame([], $response->trailerFields());

        $fixed = $response->withTrailers(['grpc-status' => 0, 'X-List' => ['a', 'b']]);
        self::assertFalse($response->hasTrailers(), 'immutable');
        self::assertTrue($fixed->hasTrailers());
        self::assertSame([['grpc-status', '0'], ['X-List', 'a'], ['X-List', 'b']], $fixed->trailerFields());
        self::assertTrue($fixed->withBody('other')->withHeader('X', '1')->hasTrailers(), 'kept by the other withers');
        self::assertFalse($fixed->withTrailers([])->hasTrailers());

        // A closure is called each time the fields are asked for (each sending), not when it is given.
        $calls = 0;
        $computed = $response->withTrailers(static function () use (&$calls): array {
            return ['x-call' => (string) ++$calls];
        });
        self::assertSame(0, $calls);
        self::assertSame([['x-call', '1']], $computed->trailerFields());
        self::assertSame([['x-call', '2']], $computed->trailerFields());
        self::assertInstanceOf(\Closure::class, $computed->trailers());
    }

    /** @return iterable<string, array{0: array<string, mixed>|\Closure, 1: class-string, 2: string}> */
    public static function badTrailers(): iterable
    {
        yield 'framing' => [['Content-Length' => '3'], \InvalidArgumentException::class, '"Content-Length" may not be a trailer'];
        yield 'connection' => [['connection' => 'close'], \InvalidArgumentException::class, '"connection" may not be a trailer'];
        yield 'pseudo-header' => [[':status' => '200'], \InvalidArgumentException::class, 'Invalid response trailer ":status"'];
        yield 'space in name' => [['bad name' => 'x'], \InvalidArgumentException::class, 'Invalid response trailer "bad name"'];
        yield 'CRLF in value' => [['x-a' => "1\r\nInjected: yes"], \InvalidArgumentException::class, 'Invalid response trailer "x-a"'];
        yield 'closure returns no array' => [static fn () => 'grpc-status: 0', \UnexpectedValueException::class, 'must return an array of fields, not string'];
    }

    /** @param array<string, mixed>|\Closure $trailers @param class-string<\Throwable> $class */
    #[\PHPUnit\Framework\Attributes\DataProvider('badTrailers')]
    public function testBadTrailersAreRefusedByName(array|\Closure $trailers, string $class, string $message): void
    {
        $response = (new Response())->withTrailers($trailers);
        $this->expectException($class);
        $this->expectExceptionMessage($message);
        $response->trailerFields();
    }
}
