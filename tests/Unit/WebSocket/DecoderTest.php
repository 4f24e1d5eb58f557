<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\WebSocket;

use PHPUnit\Framework\TestCase;
use Weft\WebSocket\Decoder;
use Weft\WebSocket\Frame;
use Weft\WebSocket\Handshake;
use Weft\WebSocket\ProtocolError;
use Weft\WebSocket\Utf8;

final class DecoderTest extends TestCase
{
    public function testFramesArriveWhateverTheReadBoundaries(): void
    {
        $bytes = Frame::encodeMasked(Frame::TEXT, 'hello') . Frame::encodeMasked(Frame::BINARY, \str_repeat("\x00", 70000))
            . Frame::encodeMasked(Frame::PING, 'p') . Frame::encodeMasked(Frame::TEXT, 'fr', false) . Frame::encodeMasked(Frame::CONTINUATION, 'ag');
        foreach ([1, 3, 7, 4096, \strlen($bytes)] as $step) {
            $decoder = new Decoder(1 << 20);
            $got = [];
            foreach (\str_split($bytes, $step) as $piece) {
                $decoder->push($piece);
                while (($frame = $decoder->next()) !== null) {
                    $got[] = [$frame[0], \strlen($frame[1]) > 10 ? \strlen($frame[1]) : $frame[1]];
                }
            }
            self::assertSame([[Frame::TEXT, 'hello'], [Frame::BINARY, 70000], [Frame::PING, 'p'], [Frame::TEXT, 'frag']], $got, "read $step bytes at a time");
            self::assertTrue($decoder->isEmpty());
        }
    }

    public function testTheSizeLimitIsCheckedFromTheHeaderBeforeThePayloadArrives(): void
    {
        $decoder = new Decoder(100);
        $decoder->push(\substr(Frame::encodeMasked(Frame::BINARY, \str_repeat('a', 101)), 0, 4));
        try {
            $decoder->next();
            self::fail('expected a ProtocolError');
        } catch (ProtocolError $e) {
            self::assertSame(1009, $e->closeCode);
        }
    }

    public function testUtf8FailsOnTheFragmentWhereItGoesWrong(): void
    {
        $decoder = new Decoder(1 << 20);
        $decoder->push(Frame::encodeMasked(Frame::TEXT, "ok \xe2\x82", false)); // a cut € so far: fine
        self::assertNull($decoder->next());
        $decoder->push(Frame::encodeMasked(Frame::CONTINUATION, "\xac and \xed\xa0", false)); // a surrogate's start
        $this->expectExceptionObject(ProtocolError::invalidUtf8('a text message'));
        $decoder->next();
    }

    public function testIncompleteTail(): void
    {
        self::assertSame(0, Utf8::incompleteTail('abc'));
        self::assertSame(0, Utf8::incompleteTail("\xe2\x82\xac"));
        self::assertSame(2, Utf8::incompleteTail("a\xe2\x82"));
        self::assertSame(3, Utf8::incompleteTail("a\xf0\x90\x80"));
        self::assertSame(-1, Utf8::incompleteTail("a\xf4\x90"), 'above U+10FFFF');
        self::assertSame(-1, Utf8::incompleteTail("a\xe0\x80"), 'overlong');
        self::assertSame(-1, Utf8::incompleteTail("a\xc1"), 'overlong lead');
    }

    public function testTheAcceptKeyOfRfc6455(): void
    {
        self::assertSame('s3pPLMBiTxaQ9kYGzzhZRbK+xOo=', Handshake::accept('dGhlIHNhbXBsZSBub25jZQ=='));
    }

    public function testServerFramesUseTheShortestLengthEncoding(): void
    {
        self::assertSame("\x81\x02hi", Frame::encode(Frame::TEXT, 'hi'));
        self::assertSame("\x82\x7e\x00\x7e", \substr(Frame::encode(Frame::BINARY, \str_repeat('a', 126)), 0, 4));
        self::assertSame("\x82\x7f" . \pack('J', 65536), \substr(Frame::encode(Frame::BINARY, \str_repeat('a', 65536)), 0, 10));
        $this->expectException(\InvalidArgumentException::class);
        Frame::close(1005);
    }
}
