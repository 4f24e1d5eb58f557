<?php

declare(strict_types=1);

namespace Weft\WebSocket;

/**
 * Frame opcodes and the encoder (RFC 6455 5.2). Server frames are never masked, so one encoded frame
 * can be written to any number of connections (broadcast encodes once).
 */
final class Frame
{
    public const CONTINUATION = 0x0;
    public const TEXT = 0x1;
    public const BINARY = 0x2;
    public const CLOSE = 0x8;
    public const PING = 0x9;
    public const PONG = 0xA;

    /** A final, unmasked frame (what a server sends). */
    public static function encode(int $opcode, string $payload, bool $fin = true): string
    {
        $length = \strlen($payload);
        $first = \chr(($fin ? 0x80 : 0) | $opcode);
        if ($length < 126) {
            return $first . \chr($length) . $payload;
        }
        if ($length < 65536) {
            return $first . "\x7e" . \pack('n', $length) . $payload;
        }
        return $first . "\x7f" . \pack('J', $length) . $payload;
    }

    /** A masked frame, as a client must send it (tests and the benchmark's load client). */
    public static function encodeMasked(int $opcode, string $payload, bool $fin = true, ?string $key = null, int $rsv = 0): string
    {
        $key ??= \random_bytes(4);
        $length = \strlen($payload);
        $first = \chr(($fin ? 0x80 : 0) | ($rsv << 4) | $opcode);
        $head = match (true) {
            $length < 126 => $first . \chr(0x80 | $length),
            $length < 65536 => $first . "\xfe" . \pack('n', $length),
            default => $first . "\xff" . \pack('J', $length),
        };
        return $head . $key . ($length === 0 ? '' : $payload ^ \str_repeat($key, ($length >> 2) + 1));
    }

    /** A close frame's payload: the code and a reason of at most 123 bytes of UTF-8. */
    public static function close(int $code, string $reason = ''): string
    {
        if (!CloseCode::isSendable($code)) {
            throw new \InvalidArgumentException("Close code $code cannot be sent (1000-1003, 1007-1014, 3000-4999)");
        }
        if (\strlen($reason) > 123 || !Utf8::valid($reason)) {
            throw new \InvalidArgumentException('A close reason is at most 123 bytes of UTF-8');
        }
        return self::encode(self::CLOSE, \pack('n', $code) . $reason);
    }
}
