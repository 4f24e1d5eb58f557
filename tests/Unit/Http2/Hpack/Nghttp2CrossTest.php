<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http2\Hpack;

use PHPUnit\Framework\TestCase;
use Weft\Http2\Hpack\Decoder;
use Weft\Http2\Hpack\Encoder;

/**
 * Our codec against a real one: libnghttp2's HPACK (the library behind nghttp, h2load and curl's HTTP/2),
 * called through FFI. Our Encoder's blocks must inflate in nghttp2 to the same fields, and nghttp2's
 * deflater's blocks must decode in our Decoder, over many blocks on one connection with table size
 * changes, so that both dynamic tables are exercised in step. Skipped without FFI or the library
 * (Debian: libnghttp2-14).
 */
final class Nghttp2CrossTest extends TestCase
{
    private const LIBRARY = 'libnghttp2.so.14';
    private const INFLATE_FINAL = 0x01;
    private const INFLATE_EMIT = 0x02;

    private \FFI $ffi;

    protected function setUp(): void
    {
        if (!\extension_loaded('FFI')) {
            self::markTestSkipped('the FFI extension is not loaded');
        }
        try {
            $this->ffi = \FFI::cdef(<<<'C'
                typedef struct nghttp2_hd_deflater nghttp2_hd_deflater;
                typedef struct nghttp2_hd_inflater nghttp2_hd_inflater;
                typedef struct { uint8_t *name; uint8_t *value; size_t namelen; size_t valuelen; uint8_t flags; } nghttp2_nv;
                int nghttp2_hd_deflate_new(nghttp2_hd_deflater **deflater_ptr, size_t max_deflate_dynamic_table_size);
                void nghttp2_hd_deflate_del(nghttp2_hd_deflater *deflater);
                int nghttp2_hd_deflate_change_table_size(nghttp2_hd_deflater *deflater, size_t settings_max_dynamic_table_size);
                size_t nghttp2_hd_deflate_bound(nghttp2_hd_deflater *deflater, const nghttp2_nv *nva, size_t nvlen);
                long nghttp2_hd_deflate_hd(nghttp2_hd_deflater *deflater, uint8_t *buf, size_t buflen, const nghttp2_nv *nva, size_t nvlen);
                int nghttp2_hd_inflate_new(nghttp2_hd_inflater **inflater_ptr);
                void nghttp2_hd_inflate_del(nghttp2_hd_inflater *inflater);
                int nghttp2_hd_inflate_change_table_size(nghttp2_hd_inflater *inflater, size_t settings_max_dynamic_table_size);
                long nghttp2_hd_inflate_hd2(nghttp2_hd_inflater *inflater, nghttp2_nv *nv_out, int *inflate_flags, const uint8_t *in, size_t inlen, int in_final);
                int nghttp2_hd_inflate_end_headers(nghttp2_hd_inflater *inflater);
                C, self::LIBRARY);
        } catch (\FFI\Exception $e) {
            self::markTestSkipped('libnghttp2 cannot be loaded through FFI: ' . $e->getMessage());
        }
    }

    public function testOurBlocksInflateInNghttp2(): void
    {
        $inflater = $this->ffi->new('nghttp2_hd_inflater*');
        self::assertSame(0, $this->ffi->nghttp2_hd_inflate_new(\FFI::addr($inflater)));
        try {
            $encoder = new Encoder();
            \mt_srand(9113);
            for ($block = 0; $block < 300; $block++) {
                if ($block % 23 === 22) {
                    // The peer (nghttp2) changes its SETTINGS_HEADER_TABLE_SIZE; we follow with a size update.
                    $size = [0, 64, 256, 4096, 65536][\mt_rand(0, 4)];
                    self::assertSame(0, $this->ffi->nghttp2_hd_inflate_change_table_size($inflater, $size));
                    $encoder->setMaxTableSize($size);
                }
                $headers = self::randomHeaders($block % 2 === 0);
                self::assertSame($headers, $this->inflate($inflater, $encoder->encode($headers)), "block $block");
            }
        } finally {
            $this->ffi->nghttp2_hd_inflate_del($inflater);
        }
    }

    public function testNghttp2BlocksDecodeInOurs(): void
    {
        $deflater = $this->ffi->new('nghttp2_hd_deflater*');
        self::assertSame(0, $this->ffi->nghttp2_hd_deflate_new(\FFI::addr($deflater), 4096));
        try {
            $decoder = new Decoder(4096, 1 << 20);
            \mt_srand(7540);
            for ($block = 0; $block < 300; $block++) {
                if ($block % 29 === 28) {
                    // We advertised a smaller table, then the default again: nghttp2 must say so in its blocks.
                    self::assertSame(0, $this->ffi->nghttp2_hd_deflate_change_table_size($deflater, [0, 100, 4096][\mt_rand(0, 2)]));
                }
                $headers = self::randomHeaders($block % 2 === 1);
                self::assertSame($headers, $decoder->decode($this->deflate($deflater, $headers)), "block $block");
            }
        } finally {
            $this->ffi->nghttp2_hd_deflate_del($deflater);
        }
    }

    /** @return list<array{0: string, 1: string}> */
    private function inflate(\FFI\CData $inflater, string $block): array
    {
        $nv = $this->ffi->new('nghttp2_nv');
        $flags = $this->ffi->new('int');
        $headers = [];
        $rest = $block;
        while (true) {
            // A copy of what is left each time: simpler than pointer arithmetic, and blocks are small.
            $length = \strlen($rest);
            $buffer = $this->ffi->new('uint8_t[' . \max(1, $length) . ']');
            \FFI::memcpy($buffer, $rest, $length);
            $read = $this->ffi->nghttp2_hd_inflate_hd2($inflater, \FFI::addr($nv), \FFI::addr($flags), $buffer, $length, 1);
            self::assertGreaterThanOrEqual(0, $read, 'nghttp2 refused our block: ' . \bin2hex($block));
            $rest = \substr($rest, $read);
            if ($flags->cdata & self::INFLATE_EMIT) {
                $headers[] = [\FFI::string($nv->name, $nv->namelen), \FFI::string($nv->value, $nv->valuelen)];
            }
            if ($flags->cdata & self::INFLATE_FINAL) {
                $this->ffi->nghttp2_hd_inflate_end_headers($inflater);
                return $headers;
            }
        }
    }

    /** @param list<array{0: string, 1: string}> $headers */
    private function deflate(\FFI\CData $deflater, array $headers): string
    {
        $count = \count($headers);
        $nva = $this->ffi->new('nghttp2_nv[' . \max(1, $count) . ']');
        $keep = [];
        foreach ($headers as $i => [$name, $value]) {
            foreach (['name' => $name, 'value' => $value] as $field => $octets) {
                $buffer = $this->ffi->new('uint8_t[' . \max(1, \strlen($octets)) . ']');
                \FFI::memcpy($buffer, $octets, \strlen($octets));
                $keep[] = $buffer;
                $nva[$i]->{$field} = $this->ffi->cast('uint8_t*', \FFI::addr($buffer));
                $nva[$i]->{$field . 'len'} = \strlen($octets);
            }
        }
        $bound = $this->ffi->nghttp2_hd_deflate_bound($deflater, $nva, $count);
        $out = $this->ffi->new('uint8_t[' . \max(1, $bound) . ']');
        $written = $this->ffi->nghttp2_hd_deflate_hd($deflater, $out, $bound, $nva, $count);
        self::assertGreaterThanOrEqual(0, $written);
        return \FFI::string($out, $written);
    }

    /** @return list<array{0: string, 1: string}> */
    private static function randomHeaders(bool $response): array
    {
        $headers = $response
            ? [[':status', ['200', '200', '304', '404', '302'][\mt_rand(0, 4)]]]
            : [[':method', ['GET', 'POST'][\mt_rand(0, 1)]], [':scheme', 'https'], [':path', '/item/' . \mt_rand(1, 50)], [':authority', 'example.com']];
        $pool = [
            ['content-type', 'text/html; charset=utf-8'], ['cache-control', 'no-cache'], ['server', 'weft'],
            ['accept-encoding', 'gzip, deflate, br'], ['user-agent', 'Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/120.0'],
            ['authorization', 'Bearer ' . \bin2hex(\random_bytes(8))], ['cookie', 'a=1'], ['cookie', 'session=' . \str_repeat('z', 30)],
            ['set-cookie', 'id=' . \mt_rand() . '; HttpOnly'], ['content-length', (string) \mt_rand(0, 100000)],
            ['x-trace', \bin2hex(\random_bytes(\mt_rand(1, 40)))], ['vary', 'accept-encoding'], ['etag', '"' . \mt_rand() . '"'],
        ];
        for ($n = \mt_rand(0, 8); $n > 0; $n--) {
            $headers[] = $pool[\mt_rand(0, \count($pool) - 1)];
        }
        if (\mt_rand(0, 4) === 0) {
            $bytes = '';
            for ($n = \mt_rand(1, 200); $n > 0; $n--) {
                $bytes .= \chr(\mt_rand(1, 255)); // every octet but NUL, which nghttp2's API cannot carry in a name
            }
            $headers[] = ['x-binary', $bytes];
        }
        return $headers;
    }
}
