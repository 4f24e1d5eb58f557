<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http2;

use PHPUnit\Framework\TestCase;
use Weft\Http2\Frame;

/** The frames the server writes, byte for byte against RFC 9113 §4.1 and §6. */
final class FrameTest extends TestCase
{
    public function testTheNineByteHeader(): void
    {
        self::assertSame("\x00\x00\x05\x00\x01\x00\x00\x00\x03hello", Frame::frame(Frame::DATA, Frame::END_STREAM, 3, 'hello'));
        // A 24-bit length and a 31-bit stream id.
        $frame = Frame::frame(Frame::HEADERS, Frame::END_HEADERS, 0x7fffffff, \str_repeat('x', 70000));
        self::assertSame("\x01\x11\x70\x01\x04\x7f\xff\xff\xff", \substr($frame, 0, 9));
        self::assertSame(9 + 70000, \strlen($frame));
    }

    public function testControlFrames(): void
    {
        self::assertSame("\x00\x00\x0c\x04\x00\x00\x00\x00\x00" . "\x00\x03\x00\x00\x00\x64" . "\x00\x02\x00\x00\x00\x00",
            Frame::settings([Frame::SETTINGS_MAX_CONCURRENT_STREAMS => 100, Frame::SETTINGS_ENABLE_PUSH => 0]));
        self::assertSame("\x00\x00\x08\x07\x00\x00\x00\x00\x00" . "\x00\x00\x00\x05" . "\x00\x00\x00\x0b", Frame::goaway(5, Frame::ENHANCE_YOUR_CALM));
        self::assertSame("\x00\x00\x0b\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01why", Frame::goaway(0, Frame::PROTOCOL_ERROR, 'why'));
        self::assertSame("\x00\x00\x04\x03\x00\x00\x00\x00\x07\x00\x00\x00\x07", Frame::reset(7, Frame::REFUSED_STREAM));
        self::assertSame("\x00\x00\x04\x08\x00\x00\x00\x00\x00\x00\x0f\x00\x01", Frame::windowUpdate(0, 983041));
    }

    public function testErrorNames(): void
    {
        self::assertSame('ENHANCE_YOUR_CALM', Frame::errorName(Frame::ENHANCE_YOUR_CALM));
        self::assertSame('NO_ERROR', Frame::errorName(0));
        self::assertSame('0xff', Frame::errorName(0xff));
    }
}
