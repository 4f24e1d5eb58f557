<?php

declare(strict_types=1);

namespace Weft\Bench;

use Weft\Bench\Report\Column;
use Weft\Bench\Report\Format;
use Weft\Bench\Report\ReportWriter;

/**
 * What `bin/weft bench` prints on stdout, apart from the progress on stderr: each row's figures as soon
 * as the row is done, and at the end every scenario's table with its verdicts, the same as report.md's.
 * The report files are still written; this is so a terminal shows the results, not only their path.
 */
final class Terminal
{
    /** @param resource $stream */
    public function __construct(private readonly mixed $stream)
    {
    }

    /** One line: the row, then each figure its scenario's table shows ("req/s 85,390, p99 ms 2.99, ..."). */
    public static function rowLine(Scenario $scenario, Row $row): string
    {
        $head = $scenario->name() . ' ' . $row->label();
        if ($row->status !== Row::OK) {
            return "$head: {$row->status}" . ($row->reason !== null ? ": {$row->reason}" : '');
        }
        $figures = [];
        foreach ($scenario->columns() as $column) {
            // The parameters are in the label already, and the note comes last.
            if (!$column->numeric && $column->header !== 'errors') {
                continue;
            }
            try {
                $cell = ($column->cell)($row);
            } catch (\Throwable) {
                continue;
            }
            if ($cell !== Format::NONE && $cell !== '') {
                $figures[] = "{$column->header} $cell";
            }
        }
        $line = "$head: " . ($figures === [] ? 'no figures' : \implode(', ', $figures));
        return $row->notes === [] ? $line : $line . ' [' . \implode('; ', $row->notes) . ']';
    }

    public function row(Scenario $scenario, Row $row): void
    {
        \fwrite($this->stream, self::rowLine($scenario, $row) . "\n");
    }

    /**
     * Every scenario's table and verdicts (this build's; with a baseline, the table shows both builds).
     *
     * @param list<Scenario> $scenarios
     * @param array<string, list<Row>> $rows
     */
    public static function summary(array $scenarios, array $rows, bool $baseline = false): string
    {
        $out = '';
        foreach ($scenarios as $scenario) {
            $scenarioRows = $rows[$scenario->name()] ?? [];
            $out .= "\n## " . $scenario->title() . "\n\n";
            if ($scenarioRows === []) {
                $out .= "No row ran.\n";
                continue;
            }
            $columns = $scenario->columns();
            if ($baseline && $scenario->comparesBuilds()) {
                \array_unshift($columns, Column::param('build', 'build'));
            }
            $out .= ReportWriter::table($columns, $scenarioRows);
            $own = Runner::thisBuild($scenarioRows);
            try {
                $checks = $scenario->checks(RunLength::judgeable($own));
            } catch (\Throwable $e) {
                $checks = [];
                $out .= "\n(could not evaluate the checks: {$e->getMessage()})\n";
            }
            $verdicts = ReportWriter::verdicts($checks, RunLength::tooShortRows($own));
            if ($verdicts !== '') {
                $out .= "\n" . $verdicts;
            }
        }
        return $out;
    }

    /** @param list<Scenario> $scenarios @param array<string, list<Row>> $rows */
    public function tables(array $scenarios, array $rows, bool $baseline = false): void
    {
        \fwrite($this->stream, self::summary($scenarios, $rows, $baseline));
    }
}
