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

    public function testUtf8FailsInsideAFrameBeforeItsPayloadIsComplete(): void
    {
        // Autobahn 6.4.3: one frame, its payload sent in chops; the chop that breaks UTF-8 fails it.
        $frame = Frame::encodeMasked(Frame::TEXT, "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xf4\x90\x80\x80edited", true, 'abcd');
        $decoder = new Decoder(1 << 20);
        $decoder->push(\substr($frame, 0, 6 + 11));   // the head and the valid part
        self::assertNull($decoder->next());
        $decoder->push(\substr($frame, 6 + 11, 2));    // \xf4\x90: beyond U+10FFFF, whatever follows
        try {
            $decoder->next();
            self::fail('expected a ProtocolError before the frame is complete');
        } catch (ProtocolError $e) {
            self::assertSame(1007, $e->closeCode);
        }

        // The same inside a continuation frame, where the cut character began in the fragment before.
        $decoder = new Decoder(1 << 20);
        $decoder->push(Frame::encodeMasked(Frame::TEXT, "ok \xe2", false));
        self::assertNull($decoder->next());
        $continuation = Frame::encodeMasked(Frame::CONTINUATION, "\x82\xac fine, then \xc0\xaf and more", true, 'wxyz');
        $decoder->push(\substr($continuation, 0, 6 + 2));    // completes the €
        self::assertNull($decoder->next());
        $decoder->push(\substr($continuation, 8, 13));       // " fine, then \xc0": a lead that can never be valid
        $this->expectExceptionObject(ProtocolError::invalidUtf8('a text message'));
        $decoder->next();
    }

    public function testValidTextSurvivesEveryReadBoundary(): void
    {
        // Multi-byte characters cut by reads, by fragments, and by both, with every mask rotation.
        $text = "a\u{20ac}\u{1f600}\u{e9}b\u{10348}\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}z";
        $bytes = Frame::encodeMasked(Frame::TEXT, \substr($text, 0, 3), false, "\x01\x02\x03\x04")
            . Frame::encodeMasked(Frame::CONTINUATION, \substr($text, 3, 9), false, "\xf0\x0f\xaa\x55")
            . Frame::encodeMasked(Frame::PING, 'between', true, "\x00\x00\x00\x00")
            . Frame::encodeMasked(Frame::CONTINUATION, \substr($text, 12), true, "\xff\xfe\xfd\xfc")
            . Frame::encodeMasked(Frame::TEXT, $text, true, "\x10\x20\x30\x40");
        for ($step = 1; $step <= 17; $step++) {
            $decoder = new Decoder(1 << 20);
            $got = [];
            foreach (\str_split($bytes, $step) as $piece) {
                $decoder->push($piece);
                while (($frame = $decoder->next()) !== null) {
                    $got[] = $frame;
                }
            }
            self::assertSame([[Frame::PING, 'between'], [Frame::TEXT, $text], [Frame::TEXT, $text]], $got, "read $step bytes at a time");
        }
    }

    public function testTheVerdictOnTextNeverDependsOnHowItArrives(): void
    {
        // Random text, valid or not, in random fragments and random reads: refused exactly when the
        // whole message is not UTF-8. Seeded, so a failure replays.
        \mt_srand(6455);
        $pieces = ['a', "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80", "\x80", "\xe2\x82", "\xff"];
        for ($round = 0; $round < 300; $round++) {
            $message = '';
            for ($i = \mt_rand(1, 12); $i > 0; $i--) {
                $message .= $pieces[\mt_rand(0, $round % 2 === 0 ? 3 : 9)];   // even rounds: valid text only
            }
            $cuts = [0, \strlen($message)];
            for ($i = \mt_rand(0, 3); $i > 0; $i--) {
                $cuts[] = \mt_rand(0, \strlen($message));
            }
            $cuts = \array_values(\array_unique($cuts));
            \sort($cuts);
            $bytes = '';
            for ($i = 0; $i < \count($cuts) - 1; $i++) {
                $bytes .= Frame::encodeMasked($i === 0 ? Frame::TEXT : Frame::CONTINUATION, \substr($message, $cuts[$i], $cuts[$i + 1] - $cuts[$i]), $i === \count($cuts) - 2);
            }
            $decoder = new Decoder(1 << 20);
            $verdict = null;
            try {
                for ($at = 0; $at < \strlen($bytes) && $verdict === null; $at += $step) {
                    $step = \mt_rand(1, 8);
                    $decoder->push(\substr($bytes, $at, $step));
                    $frame = $decoder->next();
                    $verdict = $frame === null ? null : $frame[1];
                }
            } catch (ProtocolError $e) {
                $verdict = $e->closeCode;
            }
            self::assertSame(\mb_check_encoding($message, 'UTF-8') ? $message : 1007, $verdict, \bin2hex($message));
        }
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
