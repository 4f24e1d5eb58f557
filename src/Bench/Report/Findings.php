<?php

declare(strict_types=1);

namespace Weft\Bench\Report;

use Weft\Bench\Row;

/**
 * Small, pure helpers the scenarios use to compute their findings from rows: filter, pick the best,
 * compare, and spot where more workers made things worse.
 */
final class Findings
{
    /** A scenario's one finding when none of its rows ran. */
    public const NOTHING_RAN = 'No row ran, so there is nothing to compare.';

    /**
     * @param list<Row> $rows
     * @param array<string, mixed> $where parameter => value (or list of values)
     * @return list<Row> the rows that ran and match
     */
    public static function ok(array $rows, array $where = [], string $metric = 'rps'): array
    {
        $out = [];
        foreach ($rows as $row) {
            if (!$row->isOk() || $row->number($metric) === null) {
                continue;
            }
            foreach ($where as $param => $value) {
                $actual = $row->param($param);
                if (\is_array($value) ? !\in_array($actual, $value, false) : $actual != $value) {
                    continue 2;
                }
            }
            $out[] = $row;
        }
        return $out;
    }

    /** @param list<Row> $rows */
    public static function best(array $rows, string $metric = 'rps'): ?Row
    {
        $best = null;
        foreach ($rows as $row) {
            $value = $row->number($metric);
            if ($value !== null && ($best === null || $value > $best->number($metric))) {
                $best = $row;
            }
        }
        return $best;
    }

    /** @param list<Row> $rows */
    public static function worst(array $rows, string $metric = 'rps'): ?Row
    {
        $worst = null;
        foreach ($rows as $row) {
            $value = $row->number($metric);
            if ($value !== null && ($worst === null || $value < $worst->number($metric))) {
                $worst = $row;
            }
        }
        return $worst;
    }

    /** @param list<Row> $rows @return list<mixed> the distinct values of a parameter, sorted */
    public static function values(array $rows, string $param): array
    {
        $values = [];
        foreach ($rows as $row) {
            $value = $row->param($param);
            if ($value !== null && !\in_array($value, $values, true)) {
                $values[] = $value;
            }
        }
        \sort($values);
        return $values;
    }

    /**
     * Groups rows by the values of some parameters: "mode=sync loop=select" => rows.
     *
     * @param list<Row> $rows
     * @param list<string> $params
     * @return array<string, list<Row>>
     */
    public static function groupBy(array $rows, array $params): array
    {
        $groups = [];
        foreach ($rows as $row) {
            $key = [];
            foreach ($params as $param) {
                $key[] = self::describe($param, $row->param($param));
            }
            $groups[\implode(' ', $key)][] = $row;
        }
        return $groups;
    }

    public static function describe(string $param, mixed $value): string
    {
        return match ($param) {
            'workers' => "$value worker" . ($value == 1 ? '' : 's'),
            'concurrency' => "c=$value",
            default => (string) $value,
        };
    }

    /**
     * How flat a series is: the lowest over the highest value (1.0 = perfectly flat).
     *
     * @param list<Row> $rows
     */
    public static function flatness(array $rows, string $metric = 'rps'): ?float
    {
        $values = \array_values(\array_filter(\array_map(static fn (Row $r) => $r->number($metric), $rows), static fn ($v) => $v !== null));
        if (\count($values) < 2 || \max($values) <= 0) {
            return null;
        }
        return \min($values) / \max($values);
    }

    /**
     * Where adding workers lost throughput: within each group of rows that differ only in the workers
     * count, every step up in workers whose requests/s fell by more than $tolerance.
     *
     * @param list<Row> $rows
     * @param list<string> $groupParams the other parameters (e.g. mode, loop, concurrency)
     * @return list<array{group: string, from: int, to: int, fromRate: float, toRate: float}>
     */
    public static function workersHurt(array $rows, array $groupParams, float $tolerance = 0.10, string $metric = 'rps'): array
    {
        $hurts = [];
        foreach (self::groupBy(self::ok($rows, [], $metric), $groupParams) as $group => $members) {
            \usort($members, static fn (Row $a, Row $b) => $a->param('workers') <=> $b->param('workers'));
            for ($i = 1; $i < \count($members); $i++) {
                $before = $members[$i - 1]->number($metric);
                $after = $members[$i]->number($metric);
                if ($before > 0 && $after < $before * (1 - $tolerance)) {
                    $hurts[] = [
                        'group' => $group,
                        'from' => (int) $members[$i - 1]->param('workers'),
                        'to' => (int) $members[$i]->param('workers'),
                        'fromRate' => $before,
                        'toRate' => $after,
                    ];
                }
            }
        }
        return $hurts;
    }

    /**
     * Whether more workers hurt, or null when no two rows differ only in their workers count: then the
     * run says nothing about workers (e.g. only one-worker rows ran), and claiming they "never cost"
     * anything would be a sentence without evidence.
     *
     * @param list<Row> $rows
     * @param list<string> $groupParams the other parameters (e.g. mode, loop, concurrency)
     */
    public static function workersLine(array $rows, array $groupParams, string $unit = 'req/s', string $metric = 'rps'): ?string
    {
        $compared = false;
        foreach (self::groupBy(self::ok($rows, [], $metric), $groupParams) as $members) {
            $compared = $compared || \count(self::values($members, 'workers')) > 1;
        }
        return $compared ? self::describeHurts(self::workersHurt($rows, $groupParams, 0.10, $metric), $unit) : null;
    }

    /**
     * The modes side by side at each concurrency, in one sentence: "By concurrency (...): c=100: coroutine
     * 24,205, sync 21,054 (0.87x); c=1000: ...". One line rather than a winner sentence per level, which
     * repeated the overall winner's sentence word for word wherever the best rows shared a concurrency.
     * Nothing when only one concurrency ran: the overall line says it all.
     *
     * @param list<Row> $rows
     * @return list<string>
     */
    public static function winnersByConcurrency(array $rows, string $param = 'mode', string $metric = 'rps'): array
    {
        $levels = self::values(self::ok($rows, [], $metric), 'concurrency');
        if (\count($levels) < 2) {
            return [];
        }
        $parts = [];
        foreach ($levels as $c) {
            $bests = [];
            foreach (self::groupBy(self::ok($rows, ['concurrency' => $c], $metric), [$param]) as $value => $members) {
                $bests[$value] = (float) self::best($members, $metric)?->number($metric);
            }
            if (\count($bests) < 2) {
                continue;
            }
            \arsort($bests);
            $top = \reset($bests);
            $cells = [];
            foreach ($bests as $value => $rate) {
                $cells[] = $rate === $top || $top <= 0 ? \sprintf('%s %s', $value, Format::rate($rate)) : \sprintf('%s %s (%sx)', $value, Format::rate($rate), \number_format($rate / $top, 2));
            }
            $parts[] = "c=$c: " . \implode(', ', $cells);
        }
        return $parts === [] ? [] : ["By concurrency (the best row of each $param; ratio to the fastest): " . \implode('; ', $parts) . '.'];
    }

    /**
     * The findings as printed: computed lines that have nothing to say (null, empty) dropped, and no
     * sentence twice.
     *
     * @param list<?string> $lines
     * @return list<string>
     */
    public static function tidy(array $lines): array
    {
        $out = [];
        foreach ($lines as $line) {
            if ($line !== null && \trim($line) !== '' && !\in_array($line, $out, true)) {
                $out[] = $line;
            }
        }
        return $out;
    }

    /** @param list<array{group: string, from: int, to: int, fromRate: float, toRate: float}> $hurts */
    public static function describeHurts(array $hurts, string $unit = 'req/s'): string
    {
        if ($hurts === []) {
            return 'More workers never cost more than 10 % of the throughput.';
        }
        $parts = [];
        foreach ($hurts as $h) {
            $parts[] = \sprintf('%s: %d → %d workers went from %s to %s %s (%s)', $h['group'], $h['from'], $h['to'], Format::rate($h['fromRate']), Format::rate($h['toRate']), $unit, Format::change($h['fromRate'], $h['toRate']));
        }
        return 'More workers hurt in ' . \count($hurts) . ' place(s): ' . \implode('; ', $parts) . '.';
    }

    /**
     * Rows whose server stayed well below its CPU: there something else set the pace (the load
     * generator, which has one core of its own, or the round trips), and the figure is a lower bound
     * of what the server can do.
     *
     * @param list<Row> $rows
     */
    public static function unsaturated(array $rows, int $serverCores, float $below = 0.80): ?string
    {
        $idle = \array_filter(self::ok($rows, [], 'cpu_pct'), static fn (Row $r) => $r->number('cpu_pct') < $below * 100 * $serverCores);
        if ($idle === []) {
            return null;
        }
        return \sprintf(
            'In %d row(s) the server used less than %d %% of its %d core(s) (%s): there the load generator or the round trips, not the server, set the pace, so those figures understate the server.',
            \count($idle), (int) ($below * 100), $serverCores,
            \implode('; ', \array_map(static fn (Row $r) => $r->label() . ' ' . Format::pct($r->number('cpu_pct')) . ' %', $idle)),
        );
    }

    /**
     * "coroutine won with 12,345 req/s, 1.8x sync (6,789) and 9.1x fpm (1,357)": the best row of each
     * value of $param, compared.
     *
     * @param list<Row> $rows
     */
    public static function winner(array $rows, string $param, string $unit = 'req/s', string $metric = 'rps'): ?string
    {
        $bests = [];
        foreach (self::groupBy(self::ok($rows, [], $metric), [$param]) as $value => $members) {
            $bests[$value] = self::best($members, $metric);
        }
        if (\count($bests) < 1) {
            return null;
        }
        \uasort($bests, static fn (Row $a, Row $b) => $b->number($metric) <=> $a->number($metric));
        $names = \array_keys($bests);
        $top = $bests[$names[0]];
        $text = \sprintf('%s was fastest with %s %s (%s)', $names[0], Format::rate($top->number($metric)), $unit, $top->label());
        if (\count($bests) === 1) {
            return $text . '; nothing else to compare it with ran';
        }
        $others = [];
        foreach (\array_slice($names, 1) as $name) {
            $value = $bests[$name]->number($metric);
            $others[] = \sprintf('%s %s best %s %s', $value > 0 ? Format::times($top->number($metric) / $value) : '∞x', $name . "'s", Format::rate($value), $unit);
        }
        return $text . ': ' . \implode(', ', $others);
    }

    /** Which rows that ran had errors, and how many rows failed or were skipped. @param list<Row> $rows */
    public static function errorsLine(array $rows): string
    {
        $bad = [];
        foreach ($rows as $row) {
            if ($row->isOk() && $row->errorTotal() > 0) {
                $bad[] = $row->label() . ' (' . Format::errors($row->metric('errors')) . ')';
            }
        }
        $failed = \count(\array_filter($rows, static fn (Row $r) => $r->status === Row::FAILED));
        $skipped = \count(\array_filter($rows, static fn (Row $r) => $r->status === Row::SKIPPED));
        $text = $bad === [] ? 'No row that ran had errors.' : 'Rows with errors: ' . \implode('; ', $bad) . '.';
        if ($failed + $skipped > 0) {
            $text .= " $failed row(s) failed and $skipped were skipped (see the note column).";
        }
        return $text;
    }

    /**
     * "Server CPU per request (lowest of each mode): sync 9.6 µs, coroutine 10.8 µs, fpm 126 µs."
     *
     * @param list<Row> $rows
     */
    public static function cpuPerRequest(array $rows, string $param = 'mode', string $unit = 'request'): ?string
    {
        $parts = [];
        foreach (self::groupBy(self::ok($rows, [], 'cpu_us_per_req'), [$param]) as $value => $members) {
            $lowest = \min(\array_map(static fn (Row $r) => $r->number('cpu_us_per_req'), $members));
            $parts[$value] = $lowest;
        }
        if ($parts === []) {
            return null;
        }
        \asort($parts);
        $text = [];
        foreach ($parts as $value => $us) {
            $text[] = $value . ' ' . Format::number($us) . ' µs';
        }
        return "Server CPU time per $unit (all server processes; the lowest row of each $param): " . \implode(', ', $text) . '.';
    }
}
