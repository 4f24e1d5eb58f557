<?php

declare(strict_types=1);

namespace Weft\Bench\Report;

use Weft\Bench\Row;

/**
 * A line chart in plain SVG, no library: a metric against one parameter (concurrency, workers), one
 * line per series, with axes, tick labels, a title and a legend. Skipped and failed rows have no point.
 * The x axis is categorical (the measured values, evenly spaced); the y axis turns logarithmic when the
 * values span more than two orders of magnitude, as latencies often do.
 */
final class SvgChart
{
    private const WIDTH = 800;
    private const HEIGHT = 450;
    private const LEFT = 80;
    private const RIGHT = 230;
    private const TOP = 50;
    private const BOTTOM = 60;
    private const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
    private const DASHES = ['', '6,4', '2,3', '8,3,2,3'];

    /** @param list<Row> $rows */
    public static function render(Chart $chart, array $rows): string
    {
        $series = [];
        $xs = [];
        foreach ($rows as $row) {
            $x = $row->param($chart->xParam);
            $y = $row->number($chart->metric);
            if (!$row->isOk() || $y === null || $x === null) {
                continue;
            }
            $label = self::seriesLabel($chart, $row);
            $series[$label][(string) $x] = $y;
            $xs[(string) $x] = $x;
        }
        \uasort($xs, static fn ($a, $b) => \is_numeric($a) && \is_numeric($b) ? $a <=> $b : \strcmp((string) $a, (string) $b));
        $categories = \array_keys($xs);

        $plotW = self::WIDTH - self::LEFT - self::RIGHT;
        $plotH = self::HEIGHT - self::TOP - self::BOTTOM;
        $svg = [];
        $svg[] = \sprintf('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">', self::WIDTH, self::HEIGHT, self::WIDTH, self::HEIGHT);
        $svg[] = \sprintf('<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>', self::WIDTH, self::HEIGHT);
        $svg[] = \sprintf('<text x="%d" y="28" font-size="16" font-weight="bold" text-anchor="middle">%s</text>', self::LEFT + $plotW / 2, self::e($chart->title));

        $values = [];
        foreach ($series as $points) {
            \array_push($values, ...\array_values($points));
        }
        if ($values === []) {
            $svg[] = \sprintf('<text x="%d" y="%d" text-anchor="middle" fill="#666">no data measured</text>', self::LEFT + $plotW / 2, self::TOP + $plotH / 2);
            $svg[] = '</svg>';
            return \implode("\n", $svg) . "\n";
        }

        $scale = YScale::for($values);
        // Grid and y tick labels.
        foreach ($scale->ticks() as $tick) {
            $y = self::TOP + $plotH - $scale->position($tick) * $plotH;
            $svg[] = \sprintf('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e0e0e0"/>', self::LEFT, $y, self::LEFT + $plotW, $y);
            $svg[] = \sprintf('<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>', self::LEFT - 8, $y, self::e(self::short($tick)));
        }
        // Axes.
        $svg[] = \sprintf('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>', self::LEFT, self::TOP, self::LEFT, self::TOP + $plotH);
        $svg[] = \sprintf('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>', self::LEFT, self::TOP + $plotH, self::LEFT + $plotW, self::TOP + $plotH);
        if ($chart->kind === Chart::BARS) {
            return self::bars($svg, $chart, $series, $categories, $scale, $plotW, $plotH);
        }
        // X categories.
        $xPos = [];
        $n = \count($categories);
        foreach ($categories as $i => $category) {
            $x = self::LEFT + ($n === 1 ? $plotW / 2 : 30 + $i * ($plotW - 60) / ($n - 1));
            $xPos[$category] = $x;
            $svg[] = \sprintf('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#333"/>', $x, self::TOP + $plotH, $x, self::TOP + $plotH + 5);
            $svg[] = \sprintf('<text x="%.1f" y="%d" text-anchor="middle">%s</text>', $x, self::TOP + $plotH + 20, self::e((string) $category));
        }
        \array_push($svg, ...self::axisLabels($chart, $scale, $plotW, $plotH));

        // Lines, points and legend.
        $index = 0;
        foreach ($series as $label => $points) {
            $color = self::color($index);
            $dash = self::DASHES[\intdiv($index, \count(self::COLORS)) % \count(self::DASHES)];
            $coordinates = [];
            foreach ($categories as $category) {
                if (!isset($points[$category])) {
                    continue;
                }
                $coordinates[] = [$xPos[$category], self::TOP + $plotH - $scale->position($points[$category]) * $plotH, $category, $points[$category]];
            }
            if (\count($coordinates) > 1) {
                $svg[] = \sprintf(
                    '<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>',
                    $color,
                    $dash === '' ? '' : " stroke-dasharray=\"$dash\"",
                    \implode(' ', \array_map(static fn ($c) => \sprintf('%.1f,%.1f', $c[0], $c[1]), $coordinates)),
                );
            }
            foreach ($coordinates as [$x, $y, $category, $value]) {
                $svg[] = \sprintf('<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s</title></circle>', $x, $y, $color, self::e("$label, {$chart->xLabel} $category: " . self::short($value)));
            }
            $ly = self::TOP + 10 + $index * 20;
            $lx = self::WIDTH - self::RIGHT + 20;
            $svg[] = \sprintf('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>', $lx, $ly, $lx + 24, $ly, $color, $dash === '' ? '' : " stroke-dasharray=\"$dash\"");
            $svg[] = \sprintf('<circle cx="%d" cy="%d" r="3.5" fill="%s"/>', $lx + 12, $ly, $color);
            $svg[] = \sprintf('<text x="%d" y="%d" dominant-baseline="middle">%s</text>', $lx + 32, $ly, self::e($label));
            $index++;
        }
        $svg[] = '</svg>';
        return \implode("\n", $svg) . "\n";
    }

    /**
     * Side-by-side bars: one group per x value, one bar per series in the legend's order and colour,
     * each labelled with its value, so series close to each other stay readable.
     *
     * @param list<string> $svg the document so far (background, title, grid, y axis)
     * @param array<string, array<string, float>> $series
     * @param list<string> $categories
     */
    private static function bars(array $svg, Chart $chart, array $series, array $categories, YScale $scale, int $plotW, int $plotH): string
    {
        $n = \max(1, \count($categories));
        $group = $plotW / $n;
        $bar = $group * 0.8 / \max(1, \count($series));
        $bottom = self::TOP + $plotH;
        foreach ($categories as $i => $category) {
            $center = self::LEFT + ($i + 0.5) * $group;
            $svg[] = \sprintf('<text x="%.1f" y="%d" text-anchor="middle">%s</text>', $center, $bottom + 20, self::e((string) $category));
        }
        \array_push($svg, ...self::axisLabels($chart, $scale, $plotW, $plotH));
        $index = 0;
        foreach ($series as $label => $points) {
            $color = self::color($index);
            foreach ($categories as $i => $category) {
                if (!isset($points[$category])) {
                    continue;
                }
                $value = $points[$category];
                $x = self::LEFT + $i * $group + 0.1 * $group + $index * $bar;
                $top = $bottom - $scale->position($value) * $plotH;
                $svg[] = \sprintf('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>', $x, $top, \max(1.0, $bar - 1), \max(0.0, $bottom - $top), $color, self::e("$label, {$chart->xLabel} $category: " . self::short($value)));
                if ($bar >= 9) {
                    $tx = $x + $bar / 2 + 3;
                    $ty = \max(self::TOP + 30.0, $top - 4);
                    $svg[] = \sprintf('<text x="%.1f" y="%.1f" font-size="9" transform="rotate(-90 %.1f %.1f)">%s</text>', $tx, $ty, $tx, $ty, self::e(self::short($value)));
                }
            }
            $ly = self::TOP + 10 + $index * 20;
            $lx = self::WIDTH - self::RIGHT + 20;
            $svg[] = \sprintf('<rect x="%d" y="%d" width="24" height="10" fill="%s"/>', $lx, $ly - 5, $color);
            $svg[] = \sprintf('<text x="%d" y="%d" dominant-baseline="middle">%s</text>', $lx + 32, $ly, self::e($label));
            $index++;
        }
        $svg[] = '</svg>';
        return \implode("\n", $svg) . "\n";
    }

    /** @return list<string> the x axis's label under the plot, the y axis's turned along its left side */
    private static function axisLabels(Chart $chart, YScale $scale, int $plotW, int $plotH): array
    {
        $yLabel = $chart->yLabel . ($scale->log ? ' (log scale)' : '');
        return [
            \sprintf('<text x="%d" y="%d" text-anchor="middle">%s</text>', self::LEFT + $plotW / 2, self::HEIGHT - 14, self::e($chart->xLabel)),
            \sprintf('<text x="18" y="%d" text-anchor="middle" transform="rotate(-90 18 %d)">%s</text>', self::TOP + $plotH / 2, self::TOP + $plotH / 2, self::e($yLabel)),
        ];
    }

    private static function color(int $index): string
    {
        return self::COLORS[$index % \count(self::COLORS)];
    }

    private static function seriesLabel(Chart $chart, Row $row): string
    {
        $parts = [];
        foreach ($chart->series as $param) {
            $value = $row->param($param);
            if ($value === null || $value === '') {
                continue;
            }
            $parts[] = match ($param) {
                'workers' => "$value w",
                'concurrency' => "c=$value",
                default => (string) $value,
            };
        }
        return $parts === [] ? 'all' : \implode(' ', $parts);
    }

    /** 85,390 -> "85.4k"; 0.25 -> "0.25" */
    public static function short(float $value): string
    {
        $abs = \abs($value);
        return match (true) {
            $abs >= 1e6 => \rtrim(\rtrim(\number_format($value / 1e6, 2, '.', ''), '0'), '.') . 'M',
            $abs >= 1e3 => \rtrim(\rtrim(\number_format($value / 1e3, 1, '.', ''), '0'), '.') . 'k',
            $abs >= 10 || $abs == 0.0 => \number_format($value, 0, '.', ''),
            $abs >= 1 => \rtrim(\rtrim(\number_format($value, 1, '.', ''), '0'), '.'),
            default => \rtrim(\rtrim(\number_format($value, 3, '.', ''), '0'), '.'),
        };
    }

    private static function e(string $text): string
    {
        return \htmlspecialchars($text, \ENT_XML1 | \ENT_QUOTES, 'UTF-8');
    }
}
