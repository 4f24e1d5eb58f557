<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\WebSocket;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\RawWebSocket;
use Weft\Tests\Support\ServerProcess;
use Weft\WebSocket\Frame;

/**
 * Autobahn|Testsuite's case categories, re-expressed as data and run over raw sockets against a live
 * `bin/weft serve` echo endpoint: framing (1.x), pings and pongs (2.x), reserved bits (3.x), opcodes
 * (4.x), fragmentation (5.x), UTF-8 handling (6.x), close handling (7.x), limits (9.x in spirit) and
 * masking. Each case sends its bytes; unless the server is expected to fail the connection, a close
 * 1000 follows. The server's frames up to the end of TCP must be exactly the expected ones.
 */
final class ConformanceTest extends TestCase
{
    private const T = Frame::TEXT;
    private const B = Frame::BINARY;
    private const C = Frame::CONTINUATION;
    private const PING = Frame::PING;
    private const PONG = Frame::PONG;
    private const CLOSE = Frame::CLOSE;

    private static ?ServerProcess $server = null;

    public static function setUpBeforeClass(): void
    {
        self::$server = new ServerProcess([__DIR__ . '/fixtures/ws.php', '--workers', '1']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
    }

    /**
     * @return iterable<string, array{string, list<string>, list<array{int, string|int}>, bool}>
     *   path, frames to send (raw bytes), expected frames ([opcode, payload] or [CLOSE, code]), whether the
     *   server fails the connection (no closing 1000 is sent by the client)
     */
    public static function cases(): iterable
    {
        $m = static fn (int $op, string $payload = '', bool $fin = true, int $rsv = 0): string => Frame::encodeMasked($op, $payload, $fin, null, $rsv);
        $close = static fn (int $code, string $reason = ''): string => Frame::encodeMasked(Frame::CLOSE, \pack('n', $code) . $reason);

        // 1.x framing: payload lengths around the 7-bit, 16-bit and 64-bit length encodings.
        foreach ([0, 1, 125, 126, 127, 128, 65535, 65536, 300000] as $n) {
            yield "1 text of $n bytes" => ['/', [$m(self::T, \str_repeat('*', $n))], [[self::T, \str_repeat('*', $n)]], false];
            yield "1 binary of $n bytes" => ['/', [$m(self::B, \str_repeat("\xfe", $n))], [[self::B, \str_repeat("\xfe", $n)]], false];
        }
        yield '1 a frame split into single bytes' => ['/', \str_split($m(self::T, 'chopped')), [[self::T, 'chopped']], false];
        yield '1 many frames in one write' => ['/', [\str_repeat($m(self::T, 'x'), 50)], \array_fill(0, 50, [self::T, 'x']), false];

        // 2.x pings and pongs.
        yield '2.1 ping without payload' => ['/', [$m(self::PING)], [[self::PONG, '']], false];
        yield '2.2 ping with text' => ['/', [$m(self::PING, 'Hello, world!')], [[self::PONG, 'Hello, world!']], false];
        yield '2.3 ping with binary' => ['/', [$m(self::PING, "\x00\xff\xfe\xfd\xfc\xfb\x00\xff")], [[self::PONG, "\x00\xff\xfe\xfd\xfc\xfb\x00\xff"]], false];
        yield '2.4 ping of 125 bytes' => ['/', [$m(self::PING, \str_repeat("\xfe", 125))], [[self::PONG, \str_repeat("\xfe", 125)]], false];
        yield '2.5 ping of 126 bytes' => ['/', [$m(self::PING, \str_repeat("\xfe", 126))], [[self::CLOSE, 1002]], true];
        yield '2.6 unsolicited pong' => ['/', [$m(self::PONG, 'unsolicited'), $m(self::T, 'after')], [[self::T, 'after']], false];
        yield '2.10 ten pings' => ['/', \array_fill(0, 10, $m(self::PING, 'p')), \array_fill(0, 10, [self::PONG, 'p']), false];

        // 3.x reserved bits.
        foreach ([1, 2, 3, 4, 5, 6, 7] as $rsv) {
            yield "3 RSV=$rsv on a text frame" => ['/', [$m(self::T, 'ok'), $m(self::T, 'bad', true, $rsv)], [[self::T, 'ok'], [self::CLOSE, 1002]], true];
        }
        yield '3 RSV on a ping' => ['/', [$m(self::PING, 'x', true, 4)], [[self::CLOSE, 1002]], true];

        // 4.x opcodes.
        foreach ([3, 4, 5, 6, 7, 11, 12, 13, 14, 15] as $opcode) {
            yield "4 reserved opcode $opcode" => ['/', [$m(self::T, 'ok'), $m($opcode, 'x')], [[self::T, 'ok'], [self::CLOSE, 1002]], true];
        }

        // 5.x fragmentation.
        yield '5.1 fragmented ping' => ['/', [$m(self::PING, 'frag', false)], [[self::CLOSE, 1002]], true];
        yield '5.2 fragmented pong' => ['/', [$m(self::PONG, 'frag', false)], [[self::CLOSE, 1002]], true];
        yield '5.3 text in two fragments' => ['/', [$m(self::T, 'frag', false), $m(self::C, 'ment')], [[self::T, 'fragment']], false];
        yield '5.6 ping between fragments' => ['/', [$m(self::T, 'frag', false), $m(self::PING, 'p'), $m(self::C, 'ment')], [[self::PONG, 'p'], [self::T, 'fragment']], false];
        yield '5.9 continuation without a start' => ['/', [$m(self::C, 'orphan')], [[self::CLOSE, 1002]], true];
        yield '5.15 a new message inside a fragmented one' => ['/', [$m(self::T, 'a', false), $m(self::T, 'b')], [[self::CLOSE, 1002]], true];
        yield '5.18 empty fragments' => ['/', [$m(self::T, '', false), $m(self::C, '', false), $m(self::C, '')], [[self::T, '']], false];
        yield '5.19 binary in many fragments with pings' => ['/', [$m(self::B, "\x01", false), $m(self::PING, '1'), $m(self::C, "\x02", false), $m(self::PING, '2'), $m(self::C, "\x03")], [[self::PONG, '1'], [self::PONG, '2'], [self::B, "\x01\x02\x03"]], false];

        // 6.x UTF-8 handling.
        $kosme = "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5";
        yield '6.2 valid UTF-8' => ['/', [$m(self::T, $kosme)], [[self::T, $kosme]], false];
        yield '6.2 valid UTF-8 split inside a character' => ['/', [$m(self::T, \substr($kosme, 0, 3), false), $m(self::C, \substr($kosme, 3))], [[self::T, $kosme]], false];
        yield '6.2 every byte a fragment' => ['/', [$m(self::T, $kosme[0], false), ...\array_map(static fn (string $c) => $m(self::C, $c, false), \str_split(\substr($kosme, 1, -1))), $m(self::C, \substr($kosme, -1))], [[self::T, $kosme]], false];
        yield '6.4 fail fast: invalid first fragment' => ['/', [$m(self::T, $kosme . "\xed\xa0\x80edited", false)], [[self::CLOSE, 1007]], true];
        yield '6.4 fail fast: impossible tail' => ['/', [$m(self::T, $kosme . "\xf4\x90", false)], [[self::CLOSE, 1007]], true];
        // 6.4.3/6.4.4: one frame whose payload stops right after the bytes that break UTF-8 (the
        // rest is never sent): the server fails it from what has arrived.
        $chopped = Frame::encodeMasked(self::T, $kosme . "\xf4\x90\x80\x80edited");
        yield '6.4.3 fail fast inside a frame' => ['/', [\substr($chopped, 0, 6 + 11), \substr($chopped, 6 + 11, 2)], [[self::CLOSE, 1007]], true];
        $chopped = Frame::encodeMasked(self::T, $kosme . "\xf4\x90\x80\x80edited");
        yield '6.4.4 fail fast inside a frame, one byte' => ['/', [\substr($chopped, 0, 6 + 11), \substr($chopped, 6 + 11, 1), \substr($chopped, 6 + 12, 1)], [[self::CLOSE, 1007]], true];
        yield '6.6 4-byte character at the end, complete' => ['/', [$m(self::T, "\xf0\x90\x80\x80", false), $m(self::C, '')], [[self::T, "\xf0\x90\x80\x80"]], false];
        yield '6.6 message ends inside a character' => ['/', [$m(self::T, "ab\xe2\x82", false), $m(self::C, '')], [[self::CLOSE, 1007]], true];
        $invalid = ['overlong /' => "\xc0\xaf", 'overlong 3-byte' => "\xe0\x80\xaf", 'surrogate' => "\xed\xa0\x80", 'above U+10FFFF' => "\xf4\x90\x80\x80", 'lone continuation' => "\x80", '5-byte form' => "\xf8\x88\x80\x80\x80", 'byte FE' => "\xfe", 'truncated' => "\xce"];
        foreach ($invalid as $name => $bytes) {
            yield "6 invalid: $name" => ['/', [$m(self::T, "ok$bytes")], [[self::CLOSE, 1007]], true];
            yield "6 invalid in a fragment: $name" => ['/', [$m(self::T, 'ok', false), $m(self::C, $bytes)], [[self::CLOSE, 1007]], true];
        }
        yield '6 invalid UTF-8 in a binary message is fine' => ['/', [$m(self::B, "\xc0\xaf")], [[self::B, "\xc0\xaf"]], false];

        // 7.x close handling (the client's close ends every case: echoed, then TCP ends).
        yield '7.1 close without payload' => ['/', [$m(self::CLOSE)], [[self::CLOSE, 1005]], true];
        yield '7.1 data after close is ignored' => ['/', [$close(1000) . $m(self::T, 'late')], [[self::CLOSE, 1000]], true];
        yield '7.3 close with a one-byte payload' => ['/', [$m(self::CLOSE, "\x03")], [[self::CLOSE, 1002]], true];
        yield '7.3 close with a 123-byte reason' => ['/', [$close(1000, \str_repeat('r', 123))], [[self::CLOSE, 1000]], true];
        yield '7.3 close with a 124-byte reason' => ['/', [$close(1000, \str_repeat('r', 124))], [[self::CLOSE, 1002]], true];
        yield '7.5 close reason not UTF-8' => ['/', [$close(1000, "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80")], [[self::CLOSE, 1007]], true];
        foreach ([1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999] as $code) {
            yield "7.7 valid close code $code" => ['/', [$close($code)], [[self::CLOSE, $code]], true];
        }
        foreach ([0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535] as $code) {
            yield "7.9 invalid close code $code" => ['/', [$close($code)], [[self::CLOSE, 1002]], true];
        }

        // What arrives in the same read as a close frame or a violation: the messages before it are
        // answered before our close frame (one write: one read on the server, the echo handler is
        // resumed with the first message while the close or the bad frame is still in the buffer).
        yield '7.1.1 a message and the close in one write' => ['/', [$m(self::T, 'Hello World!') . $close(1000)], [[self::T, 'Hello World!'], [self::CLOSE, 1000]], true];
        yield '7.1 messages, a close with a code, then data, in one write' => ['/', [$m(self::T, 'a') . $m(self::B, 'b') . $close(4000, 'bye') . $m(self::T, 'late')], [[self::T, 'a'], [self::B, 'b'], [self::CLOSE, 4000]], true];
        yield '3.2 a message, a frame with RSV, a ping, in one write' => ['/', [$m(self::T, 'Hello, world!') . $m(self::T, 'Hello, world!', true, 2) . $m(self::PING)], [[self::T, 'Hello, world!'], [self::CLOSE, 1002]], true];
        yield '4.1.3 a message, a reserved opcode, a ping, in one write' => ['/', [$m(self::T, 'Hello, world!') . $m(5, '') . $m(self::PING)], [[self::T, 'Hello, world!'], [self::CLOSE, 1002]], true];
        yield '6 a message, then invalid UTF-8, in one write' => ['/', [$m(self::T, 'good') . $m(self::T, "bad\xff")], [[self::T, 'good'], [self::CLOSE, 1007]], true];

        // Limits (the /small endpoint allows 1024-byte messages).
        yield 'limit: exactly the limit' => ['/small', [$m(self::T, \str_repeat('a', 1024))], [[self::T, \str_repeat('a', 1024)]], false];
        yield 'limit: one byte over' => ['/small', [$m(self::T, \str_repeat('a', 1025))], [[self::CLOSE, 1009]], true];
        yield 'limit: fragments over, together' => ['/small', [$m(self::B, \str_repeat('a', 600), false), $m(self::C, \str_repeat('a', 600))], [[self::CLOSE, 1009]], true];
        yield 'limit: a message, then one over, in one write' => ['/small', [$m(self::T, 'fits') . $m(self::T, \str_repeat('a', 1025))], [[self::T, 'fits'], [self::CLOSE, 1009]], true];
        yield 'limit: a huge length announced, no payload sent' => ['/small', ["\x82\xff" . \pack('J', 1 << 40) . 'mask'], [[self::CLOSE, 1009]], true];
        yield 'framing: 64-bit length with the top bit set' => ['/', ["\x82\xff\x80\x00\x00\x00\x00\x00\x00\x01mask"], [[self::CLOSE, 1002]], true];

        // Masking: a client must mask every frame.
        yield 'mask: unmasked text frame' => ['/', [Frame::encode(self::T, 'naked')], [[self::CLOSE, 1002]], true];
        yield 'mask: unmasked close frame' => ['/', [Frame::encode(self::CLOSE, \pack('n', 1000))], [[self::CLOSE, 1002]], true];
    }

    /**
     * @param list<string> $send
     * @param list<array{int, string|int}> $expected
     */
    #[DataProvider('cases')]
    public function testCase(string $path, array $send, array $expected, bool $serverEnds): void
    {
        $ws = new RawWebSocket(self::$server->address(), $path);
        self::assertSame(101, $ws->status(), $ws->responseHead);
        foreach ($send as $bytes) {
            $ws->send($bytes);
            if (\count($send) > 1) {
                \usleep(1000); // separate reads, so frames also arrive split across reads
            }
        }
        if (!$serverEnds) {
            $ws->send(Frame::encodeMasked(Frame::CLOSE, \pack('n', 1000)));
            $expected[] = [self::CLOSE, 1000];
        }
        [$frames, $ended] = $ws->readToEnd(10.0);
        $ws->close();
        $got = \array_map(static fn (array $f): array => $f[0] === self::CLOSE ? [self::CLOSE, RawWebSocket::code($f[1])] : [$f[0], $f[1]], $frames);
        self::assertSame(self::describe($expected), self::describe($got));
        self::assertTrue($ended, 'the server ends TCP after the closing handshake');
    }

    /**
     * Frames in the same write as the handshake reach the server in one read with it: the session
     * decodes them before the application's coroutine has even started. The messages before a close
     * frame or a violation are still the application's to answer before our close frame goes out.
     *
     * @return iterable<string, array{string, string, list<array{int, string|int}>}>
     */
    public static function pipelined(): iterable
    {
        $m = static fn (int $op, string $payload = '', int $rsv = 0): string => Frame::encodeMasked($op, $payload, true, null, $rsv);
        $close = static fn (int $code, string $reason = ''): string => Frame::encodeMasked(Frame::CLOSE, \pack('n', $code) . $reason);
        yield 'a message and the close' => ['/', $m(self::T, 'Hello World!') . $close(1000), [[self::T, 'Hello World!'], [self::CLOSE, 1000]]];
        yield 'messages, a close with a code, then data' => ['/', $m(self::T, 'a') . $m(self::B, 'b') . $close(4000, 'bye') . $m(self::T, 'late'), [[self::T, 'a'], [self::B, 'b'], [self::CLOSE, 4000]]];
        yield 'a message, then RSV' => ['/', $m(self::T, 'Hello') . $m(self::T, 'bad', 2) . $m(self::PING), [[self::T, 'Hello'], [self::CLOSE, 1002]]];
        yield 'a message, then a reserved opcode' => ['/', $m(self::T, 'Hello') . $m(5) . $m(self::PING), [[self::T, 'Hello'], [self::CLOSE, 1002]]];
        yield 'a message, then invalid UTF-8' => ['/', $m(self::T, 'good') . $m(self::T, "bad\xff"), [[self::T, 'good'], [self::CLOSE, 1007]]];
        yield 'a message, then one over the limit' => ['/small', $m(self::T, 'fits') . $m(self::T, \str_repeat('a', 1025)), [[self::T, 'fits'], [self::CLOSE, 1009]]];
        yield 'a ping and the close' => ['/', $m(self::PING, 'p') . $close(1000), [[self::PONG, 'p'], [self::CLOSE, 1000]]];
    }

    /** @param list<array{int, string|int}> $expected */
    #[DataProvider('pipelined')]
    public function testFramesSentWithTheHandshake(string $path, string $frames, array $expected): void
    {
        $ws = new RawWebSocket(self::$server->address(), $path, pipelined: $frames);
        self::assertSame(101, $ws->status(), $ws->responseHead);
        [$got, $ended] = $ws->readToEnd(10.0);
        $ws->close();
        $got = \array_map(static fn (array $f): array => $f[0] === self::CLOSE ? [self::CLOSE, RawWebSocket::code($f[1])] : [$f[0], $f[1]], $got);
        self::assertSame(self::describe($expected), self::describe($got));
        self::assertTrue($ended, 'the server ends TCP after the closing handshake');
    }

    /** Long payloads shortened, so a failure is readable. @param list<array{int, string|int}> $frames */
    private static function describe(array $frames): array
    {
        return \array_map(static fn (array $f): string => $f[0] . ':' . (\is_int($f[1]) ? $f[1] : (\strlen($f[1]) > 40 ? \strlen($f[1]) . ' bytes md5 ' . \md5($f[1]) : \bin2hex($f[1]))), $frames);
    }
}
