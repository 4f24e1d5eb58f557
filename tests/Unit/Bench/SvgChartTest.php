<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Bench;

use PHPUnit\Framework\TestCase;
use Weft\Bench\Report\Chart;
use Weft\Bench\Report\SvgChart;
use Weft\Bench\Report\YScale;
use Weft\Bench\Row;

/** The hand-written SVG must be well-formed XML with axes, one line per series and a legend. */
final class SvgChartTest extends TestCase
{
    private const SVG = 'http://www.w3.org/2000/svg';

    private static function chart(string $metric = 'rps'): Chart
    {
        return new Chart('x.svg', 'hello <&> "quoted": requests/s', 'concurrency', 'concurrent connections', $metric, 'requests/s', ['mode', 'workers']);
    }

    /** @param array<string, mixed> $metrics */
    private static function row(string $mode, int $workers, int $c, array $metrics, string $status = Row::OK): Row
    {
        $row = new Row('hello', ['mode' => $mode, 'workers' => $workers, 'concurrency' => $c]);
        $row->metrics = $metrics;
        $row->status = $status;
        return $row;
    }

    private static function load(string $svg): \DOMDocument
    {
        $dom = new \DOMDocument();
        self::assertTrue(@$dom->loadXML($svg), 'the SVG is well-formed XML');
        self::assertSame('svg', $dom->documentElement->localName);
        self::assertSame(self::SVG, $dom->documentElement->namespaceURI);
        return $dom;
    }

    /** @return list<string> */
    private static function texts(\DOMDocument $dom): array
    {
        $texts = [];
        foreach ($dom->getElementsByTagNameNS(self::SVG, 'text') as $text) {
            $texts[] = $text->textContent;
        }
        return $texts;
    }

    public function testLinesAxesAndLegend(): void
    {
        $rows = [
            self::row('coroutine', 1, 100, ['rps' => 64000.0]),
            self::row('coroutine', 1, 1000, ['rps' => 46000.0]),
            self::row('sync', 1, 100, ['rps' => 67000.0]),
            self::row('sync', 1, 1000, ['rps' => 38000.0]),
            self::row('fpm', 1, 100, ['rps' => 7400.0]),
            self::row('fpm', 1, 1000, [], Row::SKIPPED),
        ];
        $dom = self::load(SvgChart::render(self::chart(), $rows));
        self::assertSame(2, $dom->getElementsByTagNameNS(self::SVG, 'polyline')->length, 'one line per series with two points; fpm has one point only');
        // 5 data points + 3 legend markers.
        self::assertSame(8, $dom->getElementsByTagNameNS(self::SVG, 'circle')->length);
        $texts = self::texts($dom);
        self::assertContains('hello <&> "quoted": requests/s', $texts, 'the title is escaped, not broken');
        foreach (['coroutine 1 w', 'sync 1 w', 'fpm 1 w', '100', '1000', 'concurrent connections', 'requests/s', '0', '80k'] as $expected) {
            self::assertContains($expected, $texts);
        }
    }

    public function testNoDataStillMakesAValidChart(): void
    {
        $row = self::row('sync', 1, 100, [], Row::FAILED);
        $dom = self::load(SvgChart::render(self::chart(), [$row]));
        self::assertContains('no data measured', self::texts($dom));
    }

    public function testWideRangesGetALogScale(): void
    {
        $rows = [
            self::row('coroutine', 1, 100, ['p99_ms' => 0.8]),
            self::row('coroutine', 1, 1000, ['p99_ms' => 3000.0]),
        ];
        $dom = self::load(SvgChart::render(self::chart('p99_ms'), $rows));
        $texts = self::texts($dom);
        self::assertContains('requests/s (log scale)', $texts);
        self::assertContains('0.1', $texts);
        self::assertContains('10k', $texts);
        self::assertTrue(YScale::for([0.8, 3000.0])->log);
        self::assertFalse(YScale::for([10.0, 900.0])->log);
    }

    public function testNiceAxisMaximum(): void
    {
        self::assertSame(80000.0, YScale::niceCeiling(70350.0));
        self::assertSame(1.0, YScale::niceCeiling(1.0));
        self::assertSame(150.0, YScale::niceCeiling(101.0));
        self::assertSame('85.4k', SvgChart::short(85390.0));
        self::assertSame('1.5M', SvgChart::short(1_500_000.0));
        self::assertSame('0.25', SvgChart::short(0.25));
    }
}
