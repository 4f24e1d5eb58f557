<?php

declare(strict_types=1);

namespace Weft\WebSocket;

/**
 * Strict UTF-8 checks (no overlong forms, no surrogates, nothing above U+10FFFF), whole and incremental:
 * a text message split into fragments fails on the fragment where it goes wrong, not at its end.
 *
 * @internal
 */
final class Utf8
{
    public static function valid(string $bytes): bool
    {
        // mbstring and PCRE are both strict here; mbstring is about twice as fast.
        return \function_exists('mb_check_encoding') ? \mb_check_encoding($bytes, 'UTF-8') : \preg_match('//u', $bytes) === 1;
    }

    /**
     * How many bytes at the end of $bytes start a character that is not complete yet (0 to 3), or -1
     * when those bytes can never become valid UTF-8 whatever follows.
     */
    public static function incompleteTail(string $bytes): int
    {
        $length = \strlen($bytes);
        for ($back = 1; $back <= 3 && $back <= $length; $back++) {
            $byte = \ord($bytes[$length - $back]);
            if ($byte < 0x80) {
                return 0;
            }
            if ($byte < 0xC0) {
                continue; // a continuation byte: its lead is further back
            }
            $need = $byte < 0xE0 ? 2 : ($byte < 0xF0 ? 3 : 4);
            if ($back >= $need) {
                return 0; // the last character is complete: the whole check decides
            }
            return self::validPrefix(\substr($bytes, $length - $back)) ? $back : -1;
        }
        return 0;
    }

    /** Whether an incomplete sequence can still be completed into a valid character. */
    private static function validPrefix(string $tail): bool
    {
        $lead = \ord($tail[0]);
        if ($lead < 0xC2 || $lead > 0xF4) {
            return false;
        }
        if (!isset($tail[1])) {
            return true;
        }
        $second = \ord($tail[1]);
        [$low, $high] = match ($lead) {
            0xE0 => [0xA0, 0xBF],
            0xED => [0x80, 0x9F],
            0xF0 => [0x90, 0xBF],
            0xF4 => [0x80, 0x8F],
            default => [0x80, 0xBF],
        };
        if ($second < $low || $second > $high) {
            return false;
        }
        return !isset($tail[2]) || (\ord($tail[2]) & 0xC0) === 0x80;
    }
}
