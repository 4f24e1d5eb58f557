<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http2\Hpack;

use PHPUnit\Framework\TestCase;
use Weft\Http2\Hpack\Decoder;
use Weft\Http2\Hpack\Encoder;

final class EncoderTest extends TestCase
{
    /** Our choices (Huffman when shorter, index what repeats) are the RFC's: C.4 comes out octet for octet. */
    public function testTheAppendixC4RequestsEncodeToTheRfcBlocks(): void
    {
        $encoder = new Encoder();
        $first = [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'www.example.com']];
        self::assertSame('828684418cf1e3c2e5f23a6ba0ab90f4ff', \bin2hex($encoder->encode($first)));
        self::assertSame('828684be5886a8eb10649cbf', \bin2hex($encoder->encode([...$first, ['cache-control', 'no-cache']])));
        self::assertSame(
            '828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf',
            \bin2hex($encoder->encode([[':method', 'GET'], [':scheme', 'https'], [':path', '/index.html'], [':authority', 'www.example.com'], ['custom-key', 'custom-value']])),
        );
        self::assertSame(164, $encoder->tableSize());
    }

    public function testEveryStaticStatusIsOneOctet(): void
    {
        $encoder = new Encoder();
        foreach (['200' => 0x88, '204' => 0x89, '206' => 0x8a, '304' => 0x8b, '400' => 0x8c, '404' => 0x8d, '500' => 0x8e] as $status => $octet) {
            self::assertSame(\chr($octet), $encoder->encode([[':status', (string) $status]]));
        }
        // Any other status: literal with incremental indexing of name 8, then an index once it is in the table.
        self::assertSame("\x48\x82\x64\x02", $encoder->encode([[':status', '302']]));
        self::assertSame("\xbe", $encoder->encode([[':status', '302']]));
    }

    public function testSensitiveFieldsAreNeverIndexed(): void
    {
        $encoder = new Encoder();
        $decoder = new Decoder();
        $fields = [
            ['authorization', 'Bearer abc'], ['proxy-authorization', 'Basic eA=='], ['set-cookie', 'id=1; Secure'],
            ['cookie', 'short=1'], ['cookie', 'session=0123456789abcdef0123456789'],
        ];
        $block = $encoder->encode($fields);
        self::assertSame($fields, $decoder->decode($block));
        // §6.2.3 0001xxxx: authorization (23 on 4 bits: 0x1f 0x08), proxy-authorization (49), set-cookie (55),
        // the short cookie (32); the long cookie is indexed (01xxxxxx, name 32).
        self::assertSame("\x1f\x08", \substr($block, 0, 2));
        $sensitive = 0;
        $firsts = self::representations($block);
        foreach ($firsts as $octet) {
            $sensitive += ($octet & 0xf0) === 0x10 ? 1 : 0;
        }
        self::assertSame(4, $sensitive, 'four never-indexed literals');
        self::assertSame(0x40, $firsts[4] & 0xc0, 'the long cookie is indexed');
        self::assertSame([['cookie', 'session=0123456789abcdef0123456789']], $decoder->tableEntries());
        // Sent again: the same never-indexed literals; only the long cookie has become an index.
        self::assertSame(\substr($block, 0, self::lastFieldOffset($block)) . "\xbe", $encoder->encode($fields));
    }

    public function testRepeatedFieldsBecomeIndexesAndVolatileOnesStayLiterals(): void
    {
        $encoder = new Encoder();
        $response = [[':status', '200'], ['content-type', 'text/html; charset=utf-8'], ['server', 'weft'], ['content-length', '1234'], ['etag', '"abc"']];
        $first = $encoder->encode($response);
        $second = $encoder->encode($response);
        self::assertLessThan(\strlen($first), \strlen($second));
        // :status 200, then content-type and server from the dynamic table: three index octets, then
        // content-length and etag as literals without indexing (0000xxxx) on their static names.
        self::assertSame("\x88\xbf\xbe", \substr($second, 0, 3));
        self::assertSame("\x0f\x0d", \substr($second, 3, 2));
        self::assertSame($response, (new Decoder())->decode($first));
    }

    public function testTableSizeChangesAreSignalledAtTheStartOfTheNextBlock(): void
    {
        $encoder = new Encoder();
        $encoder->encode([['x-a', \str_repeat('a', 100)]]);
        self::assertSame(135, $encoder->tableSize());
        $encoder->setMaxTableSize(100);
        self::assertSame(0, $encoder->tableSize(), 'the entry no longer fits: evicted at once');
        self::assertSame("\x3f\x45", $encoder->encode([]), '100 on a 5-bit prefix');
        self::assertSame('', $encoder->encode([]), 'signalled once');
        // A shrink then a growth between two blocks: the smallest, then the final size (§4.2).
        $encoder->setMaxTableSize(0);
        $encoder->setMaxTableSize(8192);
        self::assertSame("\x20\x3f\xe1\x1f", $encoder->encode([]), '0, then 4096 (the most this encoder keeps)');
        // Made for a peer that allows only 256: says so before the first field.
        self::assertSame("\x3f\xe1\x01\x88", (new Encoder(256))->encode([[':status', '200']]));
        self::assertSame("\x88", (new Encoder(65536))->encode([[':status', '200']]), '4096 is the initial size: nothing to signal');
    }

    /** Random header sets through Encoder -> Decoder on one connection, with the table resized between blocks. */
    public function testRandomHeaderSetsRoundTripThroughTableSizeChanges(): void
    {
        \mt_srand(7541);
        $encoder = new Encoder();
        $decoder = new Decoder(4096, 1 << 20);
        $names = [':status', ':path', 'content-type', 'cache-control', 'set-cookie', 'cookie', 'authorization', 'x-request-id', 'vary', 'date', 'accept-encoding'];
        $values = ['', '200', '404', 'gzip, deflate', 'text/plain', 'no-cache', 'private'];
        for ($block = 0; $block < 400; $block++) {
            if ($block % 17 === 0) {
                $size = [0, 1, 40, 100, 256, 1000, 4096][\mt_rand(0, 6)];
                $encoder->setMaxTableSize($size);
                if ($block % 34 === 0) {
                    $encoder->setMaxTableSize(4096); // twice between blocks
                }
            }
            $headers = [];
            for ($i = \mt_rand(0, 12); $i > 0; $i--) {
                $name = \mt_rand(0, 3) === 0 ? 'x-' . self::randomBytes(\mt_rand(1, 12), true) : $names[\mt_rand(0, \count($names) - 1)];
                $value = match (\mt_rand(0, 3)) {
                    0 => $values[\mt_rand(0, \count($values) - 1)],
                    1 => self::randomBytes(\mt_rand(0, 300), false),
                    default => self::randomBytes(\mt_rand(0, 40), true),
                };
                $headers[] = [$name, $value];
            }
            self::assertSame($headers, $decoder->decode($encoder->encode($headers)), "block $block");
            self::assertSame($encoder->tableSize(), $decoder->tableSize(), "block $block: both tables hold the same");
        }
    }

    /**
     * The kept block (the last one that left the table as it was) against the same encoder with the
     * kept block forgotten before every encode (the plain encoding: the oracle). Header sets repeat,
     * often back to back, through insertions, evictions and size changes; every block must be the
     * plain encoding's octets, decode to its fields, and leave both tables alike.
     */
    public function testAKeptBlockIsWhatEncodingAgainGives(): void
    {
        \mt_srand(9113);
        $sets = [
            [[':status', '200'], ['content-type', 'text/plain'], ['server', 'weft'], ['date', 'Fri, 27 Nov 2026 08:00:00 GMT'], ['content-length', '11']],
            [[':status', '200'], ['content-type', 'text/plain'], ['server', 'weft'], ['date', 'Fri, 27 Nov 2026 08:00:01 GMT'], ['content-length', '11']],
            [[':status', '404'], ['content-type', 'text/html'], ['x-long', \str_repeat('v', 2500)]],
            [[':status', '200'], ['set-cookie', 'a=1'], ['x-id', '7']],
            [],
        ];
        $encoder = new Encoder();
        $oracle = new Encoder();
        $forget = new \ReflectionProperty(Encoder::class, 'lastGeneration');
        $decoder = new Decoder(4096, 1 << 20);
        $kept = 0;
        for ($block = 0; $block < 400; $block++) {
            if ($block % 23 === 22) {
                $size = [0, 64, 256, 4096][\mt_rand(0, 3)];
                $encoder->setMaxTableSize($size);
                $oracle->setMaxTableSize($size);
            }
            $headers = $sets[\mt_rand(0, 1) === 0 ? \mt_rand(0, 4) : 0];
            $kept += $encoder->generation() === $forget->getValue($encoder) && $headers === $sets[0] ? 1 : 0;
            $forget->setValue($oracle, -1);
            $expected = $oracle->encode($headers);
            $actual = $encoder->encode($headers);
            self::assertSame(\bin2hex($expected), \bin2hex($actual), "block $block");
            self::assertSame($headers, $decoder->decode($actual), "block $block decodes");
            self::assertSame($oracle->tableSize(), $encoder->tableSize(), "block $block: the tables");
            self::assertSame($decoder->tableSize(), $encoder->tableSize(), "block $block: the peer's table");
        }
        self::assertGreaterThan(50, $kept, 'the kept block was used');
    }

    public function testABlockThatSignalsASizeUpdateIsNotKept(): void
    {
        $encoder = new Encoder();
        $fields = [[':status', '200']];
        $encoder->setMaxTableSize(256);
        self::assertSame("\x3f\xe1\x01\x88", $encoder->encode($fields));
        self::assertSame("\x88", $encoder->encode($fields), 'the update is said once');
        self::assertSame("\x88", $encoder->encode($fields));
    }

    private static function randomBytes(int $length, bool $printable): string
    {
        $out = '';
        for ($i = 0; $i < $length; $i++) {
            $out .= \chr($printable ? \mt_rand(0x21, 0x7e) : \mt_rand(0, 255));
        }
        return $out;
    }

    /**
     * The first octet of each field representation in a block (strings skipped), for asserting which
     * representation the encoder chose.
     *
     * @return list<int>
     */
    private static function representations(string $block): array
    {
        $firsts = [];
        $pos = 0;
        while ($pos < \strlen($block)) {
            $octet = \ord($block[$pos]);
            $firsts[] = $octet;
            $index = self::integer($block, $pos, $octet >= 0x80 ? 0x7f : ($octet >= 0x40 ? 0x3f : 0x0f));
            if ($octet >= 0x80) {
                continue;
            }
            if ($index === 0) {
                self::skipString($block, $pos);
            }
            self::skipString($block, $pos);
        }
        return $firsts;
    }

    private static function lastFieldOffset(string $block): int
    {
        $pos = 0;
        $last = 0;
        while ($pos < \strlen($block)) {
            $last = $pos;
            $octet = \ord($block[$pos]);
            $index = self::integer($block, $pos, $octet >= 0x80 ? 0x7f : ($octet >= 0x40 ? 0x3f : 0x0f));
            if ($octet < 0x80) {
                if ($index === 0) {
                    self::skipString($block, $pos);
                }
                self::skipString($block, $pos);
            }
        }
        return $last;
    }

    private static function integer(string $block, int &$pos, int $mask): int
    {
        $value = \ord($block[$pos++]) & $mask;
        if ($value < $mask) {
            return $value;
        }
        $shift = 0;
        do {
            $octet = \ord($block[$pos++]);
            $value += ($octet & 0x7f) << $shift;
            $shift += 7;
        } while ($octet >= 0x80);
        return $value;
    }

    private static function skipString(string $block, int &$pos): void
    {
        $pos += self::integer($block, $pos, 0x7f);
    }
}
