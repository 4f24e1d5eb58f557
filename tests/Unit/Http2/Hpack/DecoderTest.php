<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http2\Hpack;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Http2\Hpack\CompressionError;
use Weft\Http2\Hpack\Decoder;
use Weft\Http2\Hpack\HeaderListTooLarge;

/** RFC 7541 Appendix C, and every way a block can be malformed. */
final class DecoderTest extends TestCase
{
    /** C.2: single representations, each on a fresh decoder. */
    public function testAppendixC2SingleRepresentations(): void
    {
        $cases = [
            'C.2.1' => ['400a637573746f6d2d6b65790d637573746f6d2d686561646572', [['custom-key', 'custom-header']], [['custom-key', 'custom-header']], 55],
            'C.2.2' => ['040c2f73616d706c652f70617468', [[':path', '/sample/path']], [], 0],
            'C.2.3' => ['100870617373776f726406736563726574', [['password', 'secret']], [], 0],
            'C.2.4' => ['82', [[':method', 'GET']], [], 0],
        ];
        foreach ($cases as $name => [$hex, $headers, $table, $size]) {
            $decoder = new Decoder();
            self::assertSame($headers, $decoder->decode(self::bytes($hex)), $name);
            self::assertSame($table, $decoder->tableEntries(), "$name: the dynamic table");
            self::assertSame($size, $decoder->tableSize(), "$name: the table size");
        }
    }

    /**
     * C.3 to C.6: three blocks each on one connection (one decoder), the table checked after each.
     *
     * @param list<array{string, list<array{string, string}>, list<array{string, string}>, int}> $blocks
     */
    #[DataProvider('appendixSequences')]
    public function testAppendixSequencesDecodeWithTheTableAfterEachBlock(int $tableSize, array $blocks): void
    {
        $decoder = new Decoder($tableSize);
        foreach ($blocks as $i => [$hex, $headers, $table, $size]) {
            self::assertSame($headers, $decoder->decode(self::bytes($hex)), "block $i");
            self::assertSame($table, $decoder->tableEntries(), "block $i: the dynamic table");
            self::assertSame($size, $decoder->tableSize(), "block $i: the table size");
        }
    }

    /** @return iterable<string, array{int, list<array{string, list<array{string, string}>, list<array{string, string}>, int}>}> */
    public static function appendixSequences(): iterable
    {
        $request1 = [[':method', 'GET'], [':scheme', 'http'], [':path', '/'], [':authority', 'www.example.com']];
        $request2 = [...$request1, ['cache-control', 'no-cache']];
        $request3 = [[':method', 'GET'], [':scheme', 'https'], [':path', '/index.html'], [':authority', 'www.example.com'], ['custom-key', 'custom-value']];
        $table1 = [[':authority', 'www.example.com']];
        $table2 = [['cache-control', 'no-cache'], ...$table1];
        $table3 = [['custom-key', 'custom-value'], ...$table2];
        yield 'C.3 requests without Huffman' => [4096, [
            ['828684410f7777772e6578616d706c652e636f6d', $request1, $table1, 57],
            ['828684be58086e6f2d6361636865', $request2, $table2, 110],
            ['828785bf400a637573746f6d2d6b65790c637573746f6d2d76616c7565', $request3, $table3, 164],
        ]];
        yield 'C.4 requests with Huffman' => [4096, [
            ['828684418cf1e3c2e5f23a6ba0ab90f4ff', $request1, $table1, 57],
            ['828684be5886a8eb10649cbf', $request2, $table2, 110],
            ['828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf', $request3, $table3, 164],
        ]];

        $date1 = ['date', 'Mon, 21 Oct 2013 20:13:21 GMT'];
        $date2 = ['date', 'Mon, 21 Oct 2013 20:13:22 GMT'];
        $location = ['location', 'https://www.example.com'];
        $private = ['cache-control', 'private'];
        $cookie = ['set-cookie', 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1'];
        $response1 = [[':status', '302'], $private, $date1, $location];
        $response2 = [[':status', '307'], $private, $date1, $location];
        $response3 = [[':status', '200'], $private, $date2, $location, ['content-encoding', 'gzip'], $cookie];
        // 256 octets: C.5.2 evicts ":status: 302"; C.5.3 evicts four entries along the way.
        $after1 = [$location, $date1, $private, [':status', '302']];
        $after2 = [[':status', '307'], $location, $date1, $private];
        $after3 = [$cookie, ['content-encoding', 'gzip'], $date2];
        yield 'C.5 responses without Huffman' => [256, [
            ['4803333032580770726976617465611d4d6f6e2c203231204f637420323031332032303a31333a323120474d546e1768747470733a2f2f7777772e6578616d706c652e636f6d', $response1, $after1, 222],
            ['4803333037c1c0bf', $response2, $after2, 222],
            ['88c1611d4d6f6e2c203231204f637420323031332032303a31333a323220474d54c05a04677a69707738666f6f3d4153444a4b48514b425a584f5157454f50495541585157454f49553b206d61782d6167653d333630303b2076657273696f6e3d31', $response3, $after3, 215],
        ]];
        yield 'C.6 responses with Huffman' => [256, [
            ['488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3', $response1, $after1, 222],
            ['4883640effc1c0bf', $response2, $after2, 222],
            ['88c16196d07abe941054d444a8200595040b8166e084a62d1bffc05a839bd9ab77ad94e7821dd7f2e6c7b335dfdfcd5b3960d5af27087f3672c1ab270fb5291f9587316065c003ed4ee5b1063d5007', $response3, $after3, 215],
        ]];
    }

    /** @return iterable<string, array{string, string}> hex block => the part of the message that names the fault */
    public static function malformedBlocks(): iterable
    {
        yield 'indexed field 0' => ['80', 'index 0'];
        yield 'index past the static table, empty dynamic table' => ['be', 'index 62 is beyond the table'];
        yield 'index far past the table (multi-octet)' => ['ff8001', 'beyond the table'];
        yield 'literal name index past the table' => ['7f0001' . '61', 'beyond the table'];
        yield 'integer ends with the block' => ['ff', 'ends inside an integer'];
        yield 'integer continuation ends with the block' => ['ff80', 'ends inside an integer'];
        yield 'integer above 2^31 - 1' => ['fffffffff70f', 'above 2^31'];
        yield 'integer of six continuation octets' => ['ff808080808000', 'continuation octets'];
        yield 'string length past the block' => ['4005' . '6162', 'overruns the block'];
        yield 'string length missing' => ['40', 'a string was expected'];
        yield 'value missing after the name' => ['400161', 'a string was expected'];
        yield 'huge string length' => ['407fffffff7f', 'overruns the block'];
        yield 'Huffman string holding EOS' => ['0084fffffffc' . '00', 'contains EOS'];
        yield 'Huffman padding of 8 one bits' => ['0082' . '1fff' . '00', 'padding'];
        yield 'Huffman padding of zeros' => ['0081' . '18' . '00', 'padding'];
        yield 'Huffman truncated code' => ['0081' . 'fe' . '00', 'padding'];
        yield 'table size update above the limit' => ['3fe21f', 'above the 4096'];
        yield 'table size update after a field' => ['8220', 'after a field'];
    }

    #[DataProvider('malformedBlocks')]
    public function testMalformedBlocksAreCompressionErrors(string $hex, string $message): void
    {
        $decoder = new Decoder();
        try {
            $decoder->decode(self::bytes($hex));
            self::fail("$hex decoded");
        } catch (CompressionError $e) {
            self::assertStringContainsString($message, $e->getMessage());
        }
    }

    public function testADecoderThatFailedRefusesEveryLaterBlock(): void
    {
        $decoder = new Decoder();
        try {
            $decoder->decode("\x80");
            self::fail('index 0 decoded');
        } catch (CompressionError) {
        }
        $this->expectException(CompressionError::class);
        $this->expectExceptionMessage('failed on an earlier block');
        $decoder->decode("\x82");
    }

    /**
     * Random blocks, and valid blocks with bytes flipped, cut short or spliced: each decodes, or fails
     * with one of the two documented exceptions; nothing else (no warning, no TypeError, no other
     * exception) ever comes out.
     */
    public function testArbitraryInputFailsOnlyWithTheDocumentedExceptions(): void
    {
        \mt_srand(2015);
        $valid = [];
        foreach (self::appendixSequences() as [, $blocks]) {
            foreach ($blocks as [$hex]) {
                $valid[] = self::bytes($hex);
            }
        }
        $outcomes = ['decoded' => 0, CompressionError::class => 0, HeaderListTooLarge::class => 0];
        for ($i = 0; $i < 6000; $i++) {
            $block = $valid[\mt_rand(0, \count($valid) - 1)];
            $block = match ($i % 4) {
                0 => self::randomOctets(\mt_rand(1, 40)),
                1 => self::flip($block),
                2 => \substr($block, 0, \mt_rand(0, \strlen($block) - 1)),
                default => \substr($block, \mt_rand(0, \strlen($block) - 1)) . $valid[\mt_rand(0, \count($valid) - 1)],
            };
            $decoder = new Decoder(\mt_rand(0, 1) === 0 ? 256 : 4096, \mt_rand(0, 1) === 0 ? 200 : 65536);
            try {
                foreach ($decoder->decode($block) as $pair) {
                    self::assertCount(2, $pair);
                    self::assertIsString($pair[0]);
                    self::assertIsString($pair[1]);
                }
                $outcomes['decoded']++;
            } catch (CompressionError | HeaderListTooLarge $e) {
                $outcomes[$e::class]++;
            }
        }
        foreach ($outcomes as $outcome => $count) {
            self::assertGreaterThan(100, $count, "$outcome happened (each outcome is exercised)");
        }
    }

    private static function randomOctets(int $length): string
    {
        $out = '';
        for ($n = 0; $n < $length; $n++) {
            $out .= \chr(\mt_rand(0, 255));
        }
        return $out;
    }

    private static function flip(string $block): string
    {
        for ($n = \mt_rand(1, 3); $n > 0; $n--) {
            $at = \mt_rand(0, \strlen($block) - 1);
            $block[$at] = \chr(\ord($block[$at]) ^ (1 << \mt_rand(0, 7)));
        }
        return $block;
    }

    public function testSizeUpdatesAtTheStartOfABlockResizeTheTable(): void
    {
        $decoder = new Decoder();
        $decoder->decode(self::bytes('400a637573746f6d2d6b65790d637573746f6d2d686561646572'));
        self::assertSame(55, $decoder->tableSize());
        // Two updates (shrink to 0, then back to 4096) before the first field: the table is emptied.
        self::assertSame([[':method', 'GET']], $decoder->decode(self::bytes('203fe11f82')));
        self::assertSame(0, $decoder->tableSize());
        // Up to the limit itself is fine.
        self::assertSame([], $decoder->decode(self::bytes('3fe11f')));
        // An entry larger than the table empties it without error (§4.4).
        $decoder->decode(self::bytes('400a637573746f6d2d6b65790d637573746f6d2d686561646572'));
        self::assertSame([['a', 'b']], $decoder->decode(self::bytes('3f07' . '400161' . '0162')));
        self::assertSame(34, $decoder->tableSize());
        self::assertSame([['custom-key', 'custom-header']], $decoder->decode(self::bytes('400a637573746f6d2d6b65790d637573746f6d2d686561646572')));
        self::assertSame([], $decoder->tableEntries());
    }

    public function testTheHeaderListLimitCountsNameValueAnd32PerField(): void
    {
        // ":method: GET" is 7 + 3 + 32 = 42; two of them 84.
        self::assertSame([[':method', 'GET'], [':method', 'GET']], (new Decoder(4096, 84))->decode("\x82\x82"));
        $decoder = new Decoder(4096, 83);
        try {
            $decoder->decode("\x82\x82");
            self::fail('84 octets passed a limit of 83');
        } catch (HeaderListTooLarge $e) {
            self::assertSame(83, $e->limit);
        }
        // The table went on: the literal after the overflow was inserted, and the next block sees it.
        $decoder = new Decoder(4096, 50);
        try {
            $decoder->decode(self::bytes('8282400161' . '0162'));
            self::fail('expected HeaderListTooLarge');
        } catch (HeaderListTooLarge) {
        }
        self::assertSame([['a', 'b']], $decoder->tableEntries());
        self::assertSame([['a', 'b']], $decoder->decode("\xbe"));
    }

    /**
     * An HPACK bomb: one 4 KB entry, then a block that references it 4,000 times (16 MB expanded, 4 KB on
     * the wire). The limit is counted as fields are decoded, so nothing near the expansion is held.
     */
    public function testAnHpackBombIsRefusedWithoutMaterializingItsExpansion(): void
    {
        $decoder = new Decoder(8192, 65536);
        $value = \str_repeat('x', 4000);
        $insert = "\x40\x01b\x7f" . self::integerTail(4000 - 127) . $value;
        self::assertSame([['b', $value]], $decoder->decode($insert));
        $bomb = \str_repeat("\xbe", 4000);
        \gc_collect_cycles();
        \memory_reset_peak_usage();
        $before = \memory_get_usage();
        try {
            $decoder->decode($bomb);
            self::fail('a 16 MB header list passed a 64 KB limit');
        } catch (HeaderListTooLarge) {
        }
        $grew = \memory_get_peak_usage() - $before;
        self::assertLessThan(2 << 20, $grew, "decoding the bomb took $grew bytes at its peak (the expansion is 16 MB)");
        // And the connection may go on: the table is intact.
        self::assertSame([['b', $value]], $decoder->decode("\xbe"));
    }

    /**
     * The kept block (the last one that left the table as it was) is the same fields only while the
     * table is: an index into the dynamic table names another field once an insertion moved it.
     */
    public function testAKeptBlockFollowsTheTable(): void
    {
        $decoder = new Decoder(4096, 65536);
        $decoder->decode(self::bytes('400178' . '0131')); // x: 1, inserted (index 62)
        $generation = $decoder->generation();
        self::assertSame([['x', '1']], $decoder->decode("\xbe"));
        self::assertSame([['x', '1']], $decoder->decode("\xbe"), 'again: kept');
        self::assertSame($generation, $decoder->generation(), 'an indexed block changes nothing');
        $decoder->decode(self::bytes('400179' . '0132')); // y: 2, now index 62
        self::assertNotSame($generation, $decoder->generation());
        self::assertSame([['y', '2']], $decoder->decode("\xbe"), 'the same octets, another table: decoded again');
        self::assertSame([['x', '1']], $decoder->decode("\xbf"));
    }

    /** A block that inserts is decoded (and inserts) every time it comes, never kept. */
    public function testABlockThatInsertsIsNotKept(): void
    {
        $decoder = new Decoder(4096, 65536);
        $block = self::bytes('400178' . '0131');
        self::assertSame([['x', '1']], $decoder->decode($block));
        self::assertSame([['x', '1']], $decoder->decode($block));
        self::assertSame([['x', '1'], ['x', '1']], $decoder->tableEntries());
        self::assertSame(2 * 34, $decoder->tableSize());
        // A size update is a change too: the same block after it evicts and inserts again.
        $decoder->decode(self::bytes('20'));
        self::assertSame([], $decoder->tableEntries());
        self::assertSame([], $decoder->decode(self::bytes('20')));
    }

    /**
     * The decoder against the same decoder with the kept block forgotten before every decode (the oracle),
     * on an encoder's blocks: repeated sets (kept), sets that insert and evict, size updates.
     */
    public function testKeptBlocksDecodeAsDecodingAgainWould(): void
    {
        \mt_srand(7541);
        $sets = [
            [[':method', 'GET'], [':path', '/'], [':scheme', 'http'], [':authority', '127.0.0.1:8080'], ['user-agent', 'h2load nghttp2/1.52.0']],
            [[':method', 'GET'], [':path', '/a'], [':scheme', 'https'], [':authority', 'example.com'], ['cookie', \str_repeat('c', 30)]],
            [[':method', 'POST'], [':path', '/'], ['x-big', \str_repeat('b', 3000)]],
        ];
        $encoder = new \Weft\Http2\Hpack\Encoder();
        $decoder = new Decoder(4096, 1 << 20);
        $oracle = new Decoder(4096, 1 << 20);
        $forget = new \ReflectionProperty(Decoder::class, 'lastGeneration');
        for ($block = 0; $block < 300; $block++) {
            if ($block % 31 === 30) {
                $encoder->setMaxTableSize([0, 100, 4096][\mt_rand(0, 2)]);
            }
            $headers = $sets[\mt_rand(0, 1) === 0 ? \mt_rand(0, 2) : 0];
            $bytes = $encoder->encode($headers);
            $forget->setValue($oracle, -1);
            self::assertSame($oracle->decode($bytes), $fields = $decoder->decode($bytes), "block $block");
            self::assertSame($headers, $fields, "block $block: the fields sent");
            self::assertSame($oracle->tableEntries(), $decoder->tableEntries(), "block $block: the tables");
        }
    }

    private static function bytes(string $hex): string
    {
        return (string) \hex2bin($hex);
    }

    /** The continuation octets of an integer past its prefix (§5.1). */
    private static function integerTail(int $rest): string
    {
        $out = '';
        while ($rest >= 0x80) {
            $out .= \chr(($rest & 0x7f) | 0x80);
            $rest >>= 7;
        }
        return $out . \chr($rest);
    }
}
