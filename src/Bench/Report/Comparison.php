<?php

declare(strict_types=1);

namespace Weft\Bench\Report;

use Weft\Bench\Build;
use Weft\Bench\Row;

/**
 * `--baseline`: the rows of this build beside the same rows of the baseline, as ratios this / baseline.
 * Both rows of a pair ran one right after the other in the same run, so the ratio is the figure to
 * read on a busy machine, not either absolute value.
 */
final class Comparison
{
    /** metric => [header, "better" direction: 1 higher is better, -1 lower is better] */
    private const METRICS = [
        'rps' => ['req/s', 1],
        'p99_ms' => ['p99', -1],
        'cpu_us_per_req' => ['CPU µs/req', -1],
        'pss_bytes' => ['PSS', -1],
    ];

    /**
     * @param list<Row> $rows
     * @return list<array{params: array<string, mixed>, this: array<string, ?float>, baseline: array<string, ?float>, ratio: array<string, ?float>}>
     */
    public static function pairs(array $rows, string $baseline): array
    {
        $byKey = [];
        foreach ($rows as $row) {
            $params = $row->params;
            $build = $params['build'] ?? Build::THIS;
            unset($params['build']);
            $byKey[\json_encode($params)][$build === Build::THIS ? 'this' : ($build === $baseline ? 'baseline' : 'other')] = $row;
        }
        $out = [];
        foreach ($byKey as $key => $pair) {
            if (!isset($pair['this'], $pair['baseline']) || !$pair['this']->isOk() || !$pair['baseline']->isOk()) {
                continue;
            }
            $entry = ['params' => \json_decode((string) $key, true), 'this' => [], 'baseline' => [], 'ratio' => []];
            foreach (\array_keys(self::METRICS) as $metric) {
                $a = $pair['this']->number($metric);
                $b = $pair['baseline']->number($metric);
                $entry['this'][$metric] = $a;
                $entry['baseline'][$metric] = $b;
                $entry['ratio'][$metric] = $a !== null && $b !== null && $b > 0 ? \round($a / $b, 3) : null;
            }
            $out[] = $entry;
        }
        return $out;
    }

    /** @param list<Row> $rows */
    public static function markdown(array $rows, string $baseline): string
    {
        $pairs = self::pairs($rows, $baseline);
        if ($pairs === []) {
            return "**This build against `$baseline`:** no pair of rows ran on both builds.\n\n";
        }
        $out = "**This build against `$baseline`** (ratio this / baseline of rows run one right after the other; req/s: higher is better, the others: lower is better):\n\n";
        $out .= '| row | ' . \implode(' | ', \array_map(static fn (array $m) => $m[0] . ' ratio', self::METRICS)) . " | req/s this / baseline |\n";
        $out .= '|:---|' . \str_repeat('---:|', \count(self::METRICS)) . "---:|\n";
        $logs = [];
        foreach ($pairs as $pair) {
            $label = [];
            foreach ($pair['params'] as $name => $value) {
                if ($value !== null && $value !== '') {
                    $label[] = Findings::describe($name, $value);
                }
            }
            $cells = [];
            foreach (\array_keys(self::METRICS) as $metric) {
                $ratio = $pair['ratio'][$metric];
                $cells[] = $ratio === null ? Format::NONE : \sprintf('%.2fx', $ratio);
                if ($ratio !== null && $ratio > 0) {
                    $logs[$metric][] = \log($ratio);
                }
            }
            $out .= \sprintf("| %s | %s | %s / %s |\n", \implode(' ', $label), \implode(' | ', $cells), Format::rate($pair['this']['rps']), Format::rate($pair['baseline']['rps']));
        }
        $geo = [];
        foreach ($logs as $metric => $values) {
            $geo[] = \sprintf('%s %.2fx', self::METRICS[$metric][0], \exp(\array_sum($values) / \count($values)));
        }
        return $out . "\nGeometric mean of the ratios over " . \count($pairs) . ' pair(s): ' . \implode(', ', $geo) . ".\n\n";
    }
}
