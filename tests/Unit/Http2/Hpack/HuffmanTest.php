<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http2\Hpack;

use PHPUnit\Framework\TestCase;
use Weft\Http2\Hpack\CompressionError;
use Weft\Http2\Hpack\Huffman;

final class HuffmanTest extends TestCase
{
    /**
     * A mistyped row of Appendix B shows here: the RFC's code is canonical (within a length, codes follow
     * symbol order; each length starts where the shorter one ended, shifted) and complete (Kraft sum 1).
     */
    public function testTheTableIsTheCanonicalCompleteCodeOfAppendixB(): void
    {
        $rows = [];
        $kraft = 0;
        foreach (Huffman::CODES as $symbol => [$code, $length]) {
            self::assertLessThan(1 << $length, $code, "symbol $symbol fits its length");
            $rows[] = [$length, $symbol, $code];
            $kraft += 1 << (30 - $length);
        }
        self::assertCount(257, $rows);
        self::assertSame(1 << 30, $kraft, 'the code is complete');
        \sort($rows);
        [$length, , $code] = $rows[0];
        self::assertSame([5, 48, 0], $rows[0], "'0' is the first 5-bit code");
        foreach (\array_slice($rows, 1) as [$nextLength, $symbol, $nextCode]) {
            self::assertSame(($code + 1) << ($nextLength - $length), $nextCode, "the code of symbol $symbol follows");
            [$length, $code] = [$nextLength, $nextCode];
        }
        self::assertSame([30, 256, 0x3fffffff], [$length, $rows[256][1], $code], 'EOS is the last code, all ones');
        // Spot checks against the RFC's own text: '/' is 011000 (§5.2 example), 'a' 00011.
        self::assertSame([0x18, 6], Huffman::CODES[\ord('/')]);
        self::assertSame([0x3, 5], Huffman::CODES[\ord('a')]);
    }

    public function testEveryOctetAndRandomStringsRoundTrip(): void
    {
        $all = \implode('', \array_map('chr', \range(0, 255)));
        self::assertSame($all, Huffman::decode(Huffman::encode($all)));
        \mt_srand(5);
        for ($i = 0; $i < 500; $i++) {
            $s = '';
            for ($n = \mt_rand(0, 64); $n > 0; $n--) {
                $s .= \chr(\mt_rand(0, 255));
            }
            $encoded = Huffman::encode($s);
            self::assertSame(\strlen($encoded), Huffman::encodedLength($s));
            self::assertSame($s, Huffman::decode($encoded));
        }
        self::assertSame('', Huffman::encode(''));
        self::assertSame('', Huffman::decode(''));
    }

    public function testTheRfcExamples(): void
    {
        foreach ([
            'www.example.com' => 'f1e3c2e5f23a6ba0ab90f4ff', 'no-cache' => 'a8eb10649cbf', 'custom-key' => '25a849e95ba97d7f',
            'custom-value' => '25a849e95bb8e8b4bf', '302' => '6402', 'private' => 'aec3771a4b', 'gzip' => '9bd9ab',
            'Mon, 21 Oct 2013 20:13:21 GMT' => 'd07abe941054d444a8200595040b8166e082a62d1bff',
            'https://www.example.com' => '9d29ad171863c78f0b97c8e9ae82ae43d3',
            'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1' => '94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007',
        ] as $key => $hex) {
            $text = (string) $key;
            self::assertSame($hex, \bin2hex(Huffman::encode($text)), $text);
            self::assertSame($text, Huffman::decode((string) \hex2bin($hex)), $text);
        }
    }

    /** Padding of 1 to 7 one bits is accepted; none, eight or more, or any zero bit is not (§5.2). */
    public function testPaddingRules(): void
    {
        // '0' is 00000: "0" + 3 ones; "00" and so on shift the padding through every length.
        for ($n = 1; $n <= 8; $n++) {
            $s = \str_repeat('0', $n);
            self::assertSame($s, Huffman::decode(Huffman::encode($s)));
        }
        self::assertSame('0000000000', \bin2hex(Huffman::encode(\str_repeat('0', 8))), 'five octets, no padding');
        foreach (['06' => 'padding 110', '1f' . 'ff' => 'eleven ones', 'ff' => 'eight ones alone', '00' . 'fe' => 'a partial code', '01' => 'a partial code ending in one', 'fffffffc' => 'EOS'] as $hex => $what) {
            try {
                Huffman::decode((string) \hex2bin($hex));
                self::fail("$what ($hex) decoded");
            } catch (CompressionError) {
                self::addToAssertionCount(1);
            }
        }
    }
}
