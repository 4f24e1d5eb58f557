<?php

declare(strict_types=1);

namespace Weft\Bench;

use Weft\Bench\Report\Chart;
use Weft\Bench\Report\Check;
use Weft\Bench\Report\Column;

/**
 * One experiment (docs/benchmarks.md), built with the run's Settings: a matrix of rows, how to run one row, and how to read the results
 * (table columns, charts, findings and the "must show" checks, all computed from the measured rows).
 */
interface Scenario
{
    /** The name on the command line: core, hello, sleep, sql3, upstream, line, preload. */
    public function name(): string;

    public function title(): string;

    /** What the scenario measures and what it reproduces, for the report. */
    public function description(): string;

    /**
     * The matrix. Rows that cannot run here and whose reason is known up front (epoll without the
     * extension, too many workers for the memory) come back already skipped.
     *
     * @return list<Row>
     */
    public function rows(Environment $env): array;

    /** Why none of the rows can run here (a missing tool, service or file), or null. */
    public function unavailable(Environment $env): ?string;

    /** Runs one row: fills its metrics and marks it ok, or skips/fails it with the reason. */
    public function run(Row $row, Environment $env): void;

    /** Expected wall time of a row in seconds, for the progress line's ETA. */
    public function estimate(Row $row): float;

    /** @return list<Column> */
    public function columns(): array;

    /** @return list<Chart> */
    public function charts(): array;

    /**
     * Sentences computed from the rows: who won and by how much, what stayed flat, where more
     * workers hurt. A null line (nothing to say) is dropped, and a sentence is never printed twice.
     *
     * @param list<Row> $rows
     * @return list<?string>
     */
    public function findings(array $rows): array;

    /**
     * The experiment's "must show" lines, each evaluated from the rows.
     *
     * @param list<Row> $rows
     * @return list<Check>
     */
    public function checks(array $rows): array;

    /** @return list<string> how the scenario ran (client split, what was pinned, ...) */
    public function notes(Environment $env): array;

    /** Removes whatever the scenario created (temporary apps, helper servers). */
    public function finish(Environment $env): void;

    /**
     * Whether `--baseline REF` can run this scenario's rows on another build too: true when a row is
     * "start the build's server, load it with this checkout's clients".
     */
    public function comparesBuilds(): bool;
}
