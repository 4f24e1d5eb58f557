<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Compression;

use PHPUnit\Framework\TestCase;
use Weft\Http\Compression\GzipBodyWriter;
use Weft\Http\Message\BodyWriter;
use Weft\Loop\Loop;

use function Weft\go;
use function Weft\run;

/**
 * Compressing a large body lets the loop run between slices: another coroutine gets turns while it
 * goes on (counted, not timed), and the bytes still decode to the input.
 */
final class GzipBodyWriterTest extends TestCase
{
    protected function setUp(): void
    {
        Loop::reset('select');
    }

    protected function tearDown(): void
    {
        Loop::reset('select');
    }

    /** Varied text: several megabytes take tens of milliseconds of deflate on any machine. */
    private static function text(int $bytes): string
    {
        \mt_srand(24);
        $words = ['alpha', 'beta', 'gamma', 'delta', 'weft', 'server', 'request', 'static', 'file', 'loop'];
        $text = '';
        while (\strlen($text) < $bytes) {
            $text .= $words[\mt_rand(0, 9)] . ' ' . \mt_rand() . ($text === '' || \mt_rand(0, 9) > 0 ? ' ' : "\n");
        }
        return $text;
    }

    public function testAStreamedWriteOfMegabytesGivesOtherCoroutinesTurnsAndDecodesWhole(): void
    {
        $text = self::text(4 * 1024 * 1024);
        $sink = new class () implements BodyWriter {
            public string $bytes = '';

            public function write(string $chunk): void
            {
                $this->bytes .= $chunk;
            }
        };
        [$turnsDuring, $decoded] = run(static function () use ($text, $sink): array {
            $turns = 0;
            $done = false;
            go(static function () use (&$turns, &$done): void {
                while (!$done) {
                    $turns++;
                    \Weft\sleep(0.0);
                }
            });
            $writer = new GzipBodyWriter($sink, 6);
            $before = $turns;
            $writer->write($text);    // one write, as a file chunk or an application's whole body
            $during = $turns - $before;
            $writer->finish();
            $done = true;
            return [$during, \gzdecode($sink->bytes)];
        });
        self::assertGreaterThanOrEqual(5, $turnsDuring, 'the loop ran while one 4 MB write was compressed');
        self::assertSame($text, $decoded);
    }

    public function testALargeStringBodyIsEncodedInSlicesWithTurnsBetween(): void
    {
        $text = self::text(4 * 1024 * 1024);
        [$turnsDuring, $encoded] = run(static function () use ($text): array {
            $turns = 0;
            $done = false;
            go(static function () use (&$turns, &$done): void {
                while (!$done) {
                    $turns++;
                    \Weft\sleep(0.0);
                }
            });
            $before = $turns;
            $encoded = GzipBodyWriter::encode($text, 6);
            $during = $turns - $before;
            $done = true;
            return [$during, $encoded];
        });
        self::assertGreaterThanOrEqual(5, $turnsDuring);
        self::assertSame($text, \gzdecode($encoded));
        self::assertSame('', \gzdecode(GzipBodyWriter::encode('', 6)));
        self::assertSame('x', \gzdecode(GzipBodyWriter::encode('x', 6)), 'outside a coroutine too');
    }
}
