<?php

declare(strict_types=1);

namespace Weft\Http2\Hpack;

/**
 * The static Huffman code of RFC 7541 Appendix B (§5.2), both ways.
 *
 * Encoding packs each octet's code into an integer accumulator and writes 32 bits at a time. Decoding is a
 * state machine over the code tree: a state is an internal node of the tree (256 of them), and each
 * (state, nibble) pair is precomputed to the next state and the symbol completed on the way, if any (the
 * shortest code has 5 bits, so at most one per nibble). The loop runs it an octet at a time, from pairs of
 * nibble steps cached as they are first met. The tables are derived from CODES once per process, on first
 * use (4,096 entries, about a millisecond), instead of being a generated blob that nobody can check
 * against the RFC.
 *
 * @internal
 */
final class Huffman
{
    /** Appendix B, one row per symbol: [code aligned to the least significant bit, length in bits]; 256 is EOS. */
    public const CODES = [
        [0x1ff8, 13], [0x7fffd8, 23], [0xfffffe2, 28], [0xfffffe3, 28], [0xfffffe4, 28], [0xfffffe5, 28], [0xfffffe6, 28], [0xfffffe7, 28],
        [0xfffffe8, 28], [0xffffea, 24], [0x3ffffffc, 30], [0xfffffe9, 28], [0xfffffea, 28], [0x3ffffffd, 30], [0xfffffeb, 28], [0xfffffec, 28],
        [0xfffffed, 28], [0xfffffee, 28], [0xfffffef, 28], [0xffffff0, 28], [0xffffff1, 28], [0xffffff2, 28], [0x3ffffffe, 30], [0xffffff3, 28],
        [0xffffff4, 28], [0xffffff5, 28], [0xffffff6, 28], [0xffffff7, 28], [0xffffff8, 28], [0xffffff9, 28], [0xffffffa, 28], [0xffffffb, 28],
        // 32 ' ' .. 47 '/'
        [0x14, 6], [0x3f8, 10], [0x3f9, 10], [0xffa, 12], [0x1ff9, 13], [0x15, 6], [0xf8, 8], [0x7fa, 11],
        [0x3fa, 10], [0x3fb, 10], [0xf9, 8], [0x7fb, 11], [0xfa, 8], [0x16, 6], [0x17, 6], [0x18, 6],
        // 48 '0' .. 63 '?'
        [0x0, 5], [0x1, 5], [0x2, 5], [0x19, 6], [0x1a, 6], [0x1b, 6], [0x1c, 6], [0x1d, 6],
        [0x1e, 6], [0x1f, 6], [0x5c, 7], [0xfb, 8], [0x7ffc, 15], [0x20, 6], [0xffb, 12], [0x3fc, 10],
        // 64 '@' .. 79 'O'
        [0x1ffa, 13], [0x21, 6], [0x5d, 7], [0x5e, 7], [0x5f, 7], [0x60, 7], [0x61, 7], [0x62, 7],
        [0x63, 7], [0x64, 7], [0x65, 7], [0x66, 7], [0x67, 7], [0x68, 7], [0x69, 7], [0x6a, 7],
        // 80 'P' .. 95 '_'
        [0x6b, 7], [0x6c, 7], [0x6d, 7], [0x6e, 7], [0x6f, 7], [0x70, 7], [0x71, 7], [0x72, 7],
        [0xfc, 8], [0x73, 7], [0xfd, 8], [0x1ffb, 13], [0x7fff0, 19], [0x1ffc, 13], [0x3ffc, 14], [0x22, 6],
        // 96 '`' .. 111 'o'
        [0x7ffd, 15], [0x3, 5], [0x23, 6], [0x4, 5], [0x24, 6], [0x5, 5], [0x25, 6], [0x26, 6],
        [0x27, 6], [0x6, 5], [0x74, 7], [0x75, 7], [0x28, 6], [0x29, 6], [0x2a, 6], [0x7, 5],
        // 112 'p' .. 127
        [0x2b, 6], [0x76, 7], [0x2c, 6], [0x8, 5], [0x9, 5], [0x2d, 6], [0x77, 7], [0x78, 7],
        [0x79, 7], [0x7a, 7], [0x7b, 7], [0x7ffe, 15], [0x7fc, 11], [0x3ffd, 14], [0x1ffd, 13], [0xffffffc, 28],
        // 128 .. 143
        [0xfffe6, 20], [0x3fffd2, 22], [0xfffe7, 20], [0xfffe8, 20], [0x3fffd3, 22], [0x3fffd4, 22], [0x3fffd5, 22], [0x7fffd9, 23],
        [0x3fffd6, 22], [0x7fffda, 23], [0x7fffdb, 23], [0x7fffdc, 23], [0x7fffdd, 23], [0x7fffde, 23], [0xffffeb, 24], [0x7fffdf, 23],
        // 144 .. 159
        [0xffffec, 24], [0xffffed, 24], [0x3fffd7, 22], [0x7fffe0, 23], [0xffffee, 24], [0x7fffe1, 23], [0x7fffe2, 23], [0x7fffe3, 23],
        [0x7fffe4, 23], [0x1fffdc, 21], [0x3fffd8, 22], [0x7fffe5, 23], [0x3fffd9, 22], [0x7fffe6, 23], [0x7fffe7, 23], [0xffffef, 24],
        // 160 .. 175
        [0x3fffda, 22], [0x1fffdd, 21], [0xfffe9, 20], [0x3fffdb, 22], [0x3fffdc, 22], [0x7fffe8, 23], [0x7fffe9, 23], [0x1fffde, 21],
        [0x7fffea, 23], [0x3fffdd, 22], [0x3fffde, 22], [0xfffff0, 24], [0x1fffdf, 21], [0x3fffdf, 22], [0x7fffeb, 23], [0x7fffec, 23],
        // 176 .. 191
        [0x1fffe0, 21], [0x1fffe1, 21], [0x3fffe0, 22], [0x1fffe2, 21], [0x7fffed, 23], [0x3fffe1, 22], [0x7fffee, 23], [0x7fffef, 23],
        [0xfffea, 20], [0x3fffe2, 22], [0x3fffe3, 22], [0x3fffe4, 22], [0x7ffff0, 23], [0x3fffe5, 22], [0x3fffe6, 22], [0x7ffff1, 23],
        // 192 .. 207
        [0x3ffffe0, 26], [0x3ffffe1, 26], [0xfffeb, 20], [0x7fff1, 19], [0x3fffe7, 22], [0x7ffff2, 23], [0x3fffe8, 22], [0x1ffffec, 25],
        [0x3ffffe2, 26], [0x3ffffe3, 26], [0x3ffffe4, 26], [0x7ffffde, 27], [0x7ffffdf, 27], [0x3ffffe5, 26], [0xfffff1, 24], [0x1ffffed, 25],
        // 208 .. 223
        [0x7fff2, 19], [0x1fffe3, 21], [0x3ffffe6, 26], [0x7ffffe0, 27], [0x7ffffe1, 27], [0x3ffffe7, 26], [0x7ffffe2, 27], [0xfffff2, 24],
        [0x1fffe4, 21], [0x1fffe5, 21], [0x3ffffe8, 26], [0x3ffffe9, 26], [0xffffffd, 28], [0x7ffffe3, 27], [0x7ffffe4, 27], [0x7ffffe5, 27],
        // 224 .. 239
        [0xfffec, 20], [0xfffff3, 24], [0xfffed, 20], [0x1fffe6, 21], [0x3fffe9, 22], [0x1fffe7, 21], [0x1fffe8, 21], [0x7ffff3, 23],
        [0x3fffea, 22], [0x3fffeb, 22], [0x1ffffee, 25], [0x1ffffef, 25], [0xfffff4, 24], [0xfffff5, 24], [0x3ffffea, 26], [0x7ffff4, 23],
        // 240 .. 255
        [0x3ffffeb, 26], [0x7ffffe6, 27], [0x3ffffec, 26], [0x3ffffed, 26], [0x7ffffe7, 27], [0x7ffffe8, 27], [0x7ffffe9, 27], [0x7ffffea, 27],
        [0x7ffffeb, 27], [0xffffffe, 28], [0x7ffffec, 27], [0x7ffffed, 27], [0x7ffffee, 27], [0x7ffffef, 27], [0x7fffff0, 27], [0x3ffffee, 26],
        // 256 EOS
        [0x3fffffff, 30],
    ];

    private const EOS = 256;
    /** Octet steps kept (about 150 bytes each): enough for the text of headers, bounded whatever a peer sends. */
    private const CACHE = 4096;

    /** @var list<int> octet => code, for encode() */
    private static array $code = [];
    /** @var list<int> octet => length in bits */
    private static array $length = [];
    /**
     * (state << 4 | nibble) => next state << 4 (ready to be or-ed with the next nibble), or -1 when the
     * nibble completes EOS, which a string must not contain (§5.2).
     *
     * @var list<int>
     */
    private static array $next = [];
    /** @var list<string> (state << 4 | nibble) => the octet completed on the way, or '' */
    private static array $emit = [];
    /**
     * The same machine an octet at a time, which saves a third of the loop's time: (state << 8 | octet) =>
     * next state << 8, and the (up to two) octets completed on the way. Filled from the nibble tables as
     * pairs are first met, up to CACHE pairs (the ones header text uses come first; every pair that
     * exists would take 65,536 entries, about 10 MB in PHP arrays, which a peer could make a worker
     * keep). Steps that end in EOS are never cached: they end the decoding.
     *
     * @var array<int, int>
     */
    private static array $next8 = [];
    /** @var array<int, string> */
    private static array $emit8 = [];
    private static int $cached = 0;
    /**
     * state << 8 => true for the states a string may end in: the root (the last code ended on the last
     * bit) and the first seven nodes down the all-ones path (padding is a prefix of EOS, shorter than an
     * octet). Any other state is a truncated code, a padding of 0 bits or of 8 or more.
     *
     * @var array<int, true>
     */
    private static array $accepting = [];

    public static function encode(string $octets): string
    {
        if (self::$code === []) {
            self::build();
        }
        $code = self::$code;
        $length = self::$length;
        $out = '';
        $bits = 0; // pending bits in $acc, always < 32 between octets
        $acc = 0;
        $end = \strlen($octets);
        for ($i = 0; $i < $end; $i++) {
            $octet = \ord($octets[$i]);
            $n = $length[$octet];
            $acc = ($acc << $n) | $code[$octet]; // < 32 + 30 bits: fits the 63 of an int
            $bits += $n;
            if ($bits >= 32) {
                $bits -= 32;
                $out .= \pack('N', $acc >> $bits);
                $acc &= (1 << $bits) - 1;
            }
        }
        if ($bits > 0) {
            $pad = (8 - ($bits & 7)) & 7; // the most significant bits of EOS: ones
            $acc = ($acc << $pad) | ((1 << $pad) - 1);
            $out .= \substr(\pack('J', $acc), -(($bits + $pad) >> 3));
        }
        return $out;
    }

    /** The length encode() would return, without building it. */
    public static function encodedLength(string $octets): int
    {
        if (self::$code === []) {
            self::build();
        }
        $length = self::$length;
        $bits = 0;
        $end = \strlen($octets);
        for ($i = 0; $i < $end; $i++) {
            $bits += $length[\ord($octets[$i])];
        }
        return ($bits + 7) >> 3;
    }

    /** @throws CompressionError on EOS inside the string or padding that is not 1 to 7 one bits */
    public static function decode(string $encoded): string
    {
        if (self::$next === []) {
            self::build();
        }
        $next = self::$next;
        $emit = self::$emit;
        $next8 = self::$next8;
        $emit8 = self::$emit8;
        $state = 0; // node << 8
        $out = '';
        $length = \strlen($encoded);
        for ($i = 0; $i < $length; $i++) {
            $octet = \ord($encoded[$i]);
            $key = $state | $octet;
            if (isset($next8[$key])) {
                $state = $next8[$key];
                $out .= $emit8[$key];
                continue;
            }
            // Two nibble steps, then remembered for the next time while the cache has room.
            $high = ($state >> 4) | ($octet >> 4);
            $middle = $next[$high];
            if ($middle < 0) {
                throw new CompressionError('HPACK: a Huffman-coded string contains EOS');
            }
            $low = $middle | ($octet & 0xf);
            if ($next[$low] < 0) {
                throw new CompressionError('HPACK: a Huffman-coded string contains EOS');
            }
            $state = $next[$low] << 4;
            $piece = $emit[$high] . $emit[$low];
            $out .= $piece;
            if (self::$cached < self::CACHE) {
                $next8 = $emit8 = []; // let go of the tables so that they grow in place, not as a copy
                self::$next8[$key] = $state;
                self::$emit8[$key] = $piece;
                self::$cached++;
                $next8 = self::$next8;
                $emit8 = self::$emit8;
            }
        }
        if (!isset(self::$accepting[$state])) {
            throw new CompressionError('HPACK: a Huffman-coded string ends in a truncated code or padding that is not 1 to 7 one bits');
        }
        return $out;
    }

    private static function build(): void
    {
        // The code tree: $child[node * 2 + bit] is an internal node (> 0) or a leaf, -(symbol + 1).
        $child = [];
        $nodes = 1;
        foreach (self::CODES as $symbol => [$code, $length]) {
            $node = 0;
            for ($bit = $length - 1; $bit > 0; $bit--) {
                $slot = $node * 2 + (($code >> $bit) & 1);
                if (!isset($child[$slot])) {
                    $child[$slot] = $nodes++;
                } elseif ($child[$slot] < 0) {
                    throw new \LogicException("Huffman::CODES is not a prefix code at symbol $symbol");
                }
                $node = $child[$slot];
            }
            $slot = $node * 2 + ($code & 1);
            if (isset($child[$slot])) {
                throw new \LogicException("Huffman::CODES is not a prefix code at symbol $symbol");
            }
            $child[$slot] = -($symbol + 1);
            if ($symbol < self::EOS) {
                self::$code[$symbol] = $code;
                self::$length[$symbol] = $length;
            }
        }
        if (\count($child) !== $nodes * 2) {
            throw new \LogicException('Huffman::CODES is not a complete code');
        }
        for ($state = 0; $state < $nodes; $state++) {
            for ($nibble = 0; $nibble < 16; $nibble++) {
                $node = $state;
                $emit = '';
                for ($bit = 3; $bit >= 0; $bit--) {
                    $to = $child[$node * 2 + (($nibble >> $bit) & 1)];
                    if ($to >= 0) {
                        $node = $to;
                        continue;
                    }
                    if (-$to - 1 === self::EOS) {
                        $node = -1;
                        break;
                    }
                    $emit = \chr(-$to - 1);
                    $node = 0;
                }
                self::$next[$state << 4 | $nibble] = $node < 0 ? -1 : $node << 4;
                self::$emit[$state << 4 | $nibble] = $emit;
            }
        }
        $node = 0;
        self::$accepting[0] = true;
        for ($depth = 1; $depth <= 7; $depth++) {
            $node = $child[$node * 2 + 1];
            self::$accepting[$node << 8] = true;
        }
    }
}
