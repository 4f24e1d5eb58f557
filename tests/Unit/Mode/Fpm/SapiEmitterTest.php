<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Mode\Fpm;

use PHPUnit\Framework\TestCase;
use Weft\Http\Message\BodyWriter;
use Weft\Http\Message\Response;
use Weft\Mode\Fpm\SapiEmitter;

final class SapiEmitterTest extends TestCase
{
    private RecordingOutput $output;
    private SapiEmitter $emitter;

    protected function setUp(): void
    {
        $this->output = new RecordingOutput();
        $this->emitter = new SapiEmitter($this->output);
    }

    public function testStatusHeadersAndBody(): void
    {
        $this->emitter->emit(new Response(200, ['Content-Type' => 'text/plain'], 'Hello World'));
        self::assertSame([
            ['status', 200],
            ['header', 'Content-Type: text/plain'],
            ['header', 'Content-Length: 11'],
            ['write', 'Hello World'],
        ], $this->output->events);
    }

    public function testCustomReasonPhrase(): void
    {
        $this->emitter->emit(new Response(418, [], 'tea', 'Short and stout'));
        self::assertSame('418 Short and stout', $this->output->sentStatus());
    }

    public function testRepeatedHeadersAreSentOneFieldEach(): void
    {
        $this->emitter->emit(new Response(201, [
            'Set-Cookie' => ['a=1; Path=/', 'b=2; HttpOnly'],
            'X-Number' => 42,
            'Vary' => ['Accept', 'Accept-Encoding'],
        ], 'made'));
        self::assertSame(201, $this->output->sentStatus());
        self::assertSame([
            'Set-Cookie: a=1; Path=/',
            'Set-Cookie: b=2; HttpOnly',
            'X-Number: 42',
            'Vary: Accept',
            'Vary: Accept-Encoding',
            'Content-Length: 4',
        ], $this->output->headers());
    }

    public function testFramingFieldsAreNginxsBusiness(): void
    {
        $this->emitter->emit(new Response(200, [
            'Content-Length' => '999',
            'Connection' => 'close',
            'Transfer-Encoding' => 'chunked',
            'Keep-Alive' => 'timeout=5',
        ], 'abc'));
        self::assertSame(['Content-Length: 3'], $this->output->headers());
        self::assertSame('abc', $this->output->body());
    }

    public function testHeadSendsTheFieldsButNoBody(): void
    {
        $this->emitter->emit(new Response(200, ['Content-Type' => 'text/plain'], 'Hello World'), isHead: true);
        self::assertSame(['Content-Type: text/plain', 'Content-Length: 11'], $this->output->headers());
        self::assertSame('', $this->output->body());
    }

    public function testResponsesWithoutBody(): void
    {
        $this->emitter->emit(new Response(204, ['X-A' => 'b'], 'ignored'));
        self::assertSame(['X-A: b'], $this->output->headers());
        self::assertSame('', $this->output->body());

        $output = new RecordingOutput();
        (new SapiEmitter($output))->emit(new Response(304, ['ETag' => '"x"', 'Content-Length' => '10']));
        self::assertSame(['ETag: "x"', 'Content-Length: 10'], $output->headers());
        self::assertSame('', $output->body());
    }

    public function testStreamedBodyIsWrittenAndFlushedChunkByChunk(): void
    {
        $response = Response::stream(static function (BodyWriter $writer): void {
            $writer->write('one ');
            $writer->write('');
            $writer->write('two');
        }, 200, ['Content-Type' => 'text/plain']);
        $this->emitter->emit($response);
        self::assertSame([
            ['status', 200],
            ['header', 'Content-Type: text/plain'],
            ['header', 'X-Accel-Buffering: no'],
            ['flush', null],
            ['write', 'one '],
            ['flush', null],
            ['write', 'two'],
            ['flush', null],
        ], $this->output->events);
    }

    public function testStreamedBodyKeepsADeclaredLength(): void
    {
        $this->emitter->emit(Response::stream(static fn (BodyWriter $w) => $w->write('12345'), 200, ['Content-Length' => 5]));
        self::assertSame(['X-Accel-Buffering: no', 'Content-Length: 5'], $this->output->headers());
        self::assertSame('12345', $this->output->body());
    }

    public function testAFailingProducerIsAStreamFailure(): void
    {
        try {
            $this->emitter->emit(Response::stream(static function (BodyWriter $w): void {
                $w->write('a');
                throw new \LogicException('broken');
            }));
            self::fail('expected StreamFailed');
        } catch (\Weft\Mode\Fpm\StreamFailed $e) {
            self::assertInstanceOf(\LogicException::class, $e->getPrevious());
        }
        self::assertSame('a', $this->output->body());
    }

    public function testStreamedHeadDoesNotRunTheProducer(): void
    {
        $ran = false;
        $this->emitter->emit(Response::stream(static function () use (&$ran): void {
            $ran = true;
        }), isHead: true);
        self::assertFalse($ran);
        self::assertSame('', $this->output->body());
    }

    public function testAnInvalidFieldFailsBeforeAnythingIsSent(): void
    {
        try {
            $this->emitter->emit(new Response(200, ['X-Ok' => 'fine', 'X-Bad' => "a\r\nInjected: yes"], 'body'));
            self::fail('expected an exception');
        } catch (\InvalidArgumentException $e) {
            self::assertStringContainsString('X-Bad', $e->getMessage());
        }
        self::assertSame([], $this->output->events);

        $this->expectException(\InvalidArgumentException::class);
        $this->emitter->emit(new Response(200, ['Bad Name' => 'x']));
    }

    public function testAnInvalidContentLengthFailsBeforeAnythingIsSent(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        try {
            $this->emitter->emit(Response::stream(static fn () => null, 200, ['Content-Length' => '5, 6']));
        } finally {
            self::assertSame([], $this->output->events);
        }
    }
}
