<?php

declare(strict_types=1);

namespace Weft\Bench;

use Weft\Bench\Report\ReportWriter;

/**
 * Runs the chosen scenarios row by row. Whatever happens to a row, its processes are stopped and the
 * next row runs; after every row the report and results.json are rewritten, so an interrupted run
 * (Ctrl-C, SIGTERM) still leaves everything measured so far.
 *
 * With a baseline build, every row of a scenario that compares builds runs twice, once per build, the
 * two runs next to each other (and which goes first alternates from pair to pair), so a slow minute of a
 * loaded machine hits both sides of a ratio alike. An Adaptive scenario gets to add rows once the rows it
 * has so far have run.
 */
final class Runner
{
    /** @var array<string, list<Row>> */
    private array $rows = [];
    /** @var array<string, ?string> */
    private array $unavailable = [];
    private float $startedAt;
    /** Pairs made so far: their order alternates. */
    private int $pairs = 0;

    /** @param list<Scenario> $scenarios */
    public function __construct(
        private readonly Environment $env,
        private readonly array $scenarios,
        private readonly ReportWriter $writer,
        private readonly ?Progress $progress = null,
        private readonly ?Build $baseline = null,
        private readonly ?Terminal $terminal = null,
    ) {
        $this->startedAt = \microtime(true);
    }

    /**
     * The rows as they run: with a baseline, each row of a scenario that compares builds becomes a pair
     * (this build, the baseline), the pair's order alternating.
     *
     * @param list<Row> $rows
     * @return list<Row>
     */
    private function paired(Scenario $scenario, array $rows): array
    {
        if ($this->baseline === null || !$scenario->comparesBuilds()) {
            return $rows;
        }
        $out = [];
        foreach ($rows as $row) {
            $pair = [];
            foreach ([Build::THIS, $this->baseline->label] as $build) {
                $copy = new Row($row->scenario, $row->params + ['build' => $build]);
                if ($row->status !== Row::PENDING) {
                    $copy->status = $row->status;
                    $copy->reason = $row->reason;
                }
                $pair[] = $copy;
            }
            $this->pairs++;
            \array_push($out, ...($this->pairs % 2 === 0 ? \array_reverse($pair) : $pair));
        }
        return $out;
    }

    /** @param list<Row> $rows @return list<Row> the rows of this checkout (all rows when there is no baseline) */
    public static function thisBuild(array $rows): array
    {
        return \array_values(\array_filter($rows, static fn (Row $r): bool => ($r->param('build') ?? Build::THIS) === Build::THIS));
    }

    public function run(): int
    {
        $this->trapSignals();
        $progress = $this->progress ?? new Progress(null, $this->startedAt);
        foreach ($this->scenarios as $scenario) {
            $reason = $scenario->unavailable($this->env);
            $this->unavailable[$scenario->name()] = $reason;
            try {
                $rows = $this->paired($scenario, $scenario->rows($this->env));
            } catch (\Throwable $e) {
                $rows = [];
                $this->unavailable[$scenario->name()] = 'could not build the matrix: ' . $e->getMessage();
            }
            if ($reason !== null) {
                foreach ($rows as $row) {
                    if ($row->status === Row::PENDING) {
                        $row->skip($reason);
                    }
                }
                $progress->message("{$scenario->name()}: skipped: $reason");
            }
            $this->rows[$scenario->name()] = $rows;
        }
        $done = 0;
        $this->write(false);
        foreach ($this->scenarios as $scenario) {
            $name = $scenario->name();
            for ($i = 0; ; $i++) {
                if ($i >= \count($this->rows[$name])) {
                    // An adaptive scenario looks at what it measured and may ask for more rows.
                    $more = [];
                    if ($scenario instanceof Adaptive && !$this->env->interrupted && $this->unavailable[$name] === null) {
                        try {
                            $more = $this->paired($scenario, $scenario->next(self::thisBuild($this->rows[$name]), $this->env));
                        } catch (\Throwable $e) {
                            $progress->message("{$name}: could not choose further rows: {$e->getMessage()}");
                        }
                    }
                    if ($more === []) {
                        break;
                    }
                    \array_push($this->rows[$name], ...$more);
                    $this->write(false);
                }
                $row = $this->rows[$name][$i];
                $done++;
                if ($row->status !== Row::PENDING) {
                    continue;
                }
                if ($this->env->interrupted) {
                    $row->skip('interrupted');
                    continue;
                }
                $total = \array_sum(\array_map('count', $this->rows));
                $progress->row($name, $i + 1, \count($this->rows[$name]), $row, $done, $total, $this->remaining($row));
                $estimate = $scenario->estimate($row);
                $build = $row->param('build');
                $this->env->useBuild($build !== null && $build !== Build::THIS ? $this->baseline : null);
                try {
                    $this->runRow($scenario, $row);
                } finally {
                    $this->env->useBuild(null);
                }
                $progress->finished($row, $estimate);
                $this->terminal?->row($scenario, $row);
                $this->write(false);
            }
            try {
                $scenario->finish($this->env);
            } catch (\Throwable $e) {
                $progress->message("{$name}: clean-up failed: {$e->getMessage()}");
            }
        }
        $this->env->processes->terminateAll();
        $progress->done();
        $this->write(true);
        $this->terminal?->tables($this->scenarios, $this->rows, $this->baseline !== null);
        return $this->env->interrupted ? 130 : 0;
    }

    private function runRow(Scenario $scenario, Row $row): void
    {
        $started = \microtime(true);
        try {
            $scenario->run($row, $this->env);
            if ($row->status === Row::PENDING) {
                $row->fail('the row produced no result');
            }
        } catch (\Throwable $e) {
            $message = $e->getMessage();
            if ($this->env->interrupted) {
                $row->skip('interrupted');
            } else {
                $row->fail($message === '' ? \get_class($e) : $message);
            }
        } finally {
            // Nothing a row started may outlive it.
            $left = $this->env->processes->terminateAll();
            if ($left > 0 && !$this->env->interrupted) {
                $row->notes[] = "$left process(es) still running after the row were stopped";
            }
            $row->seconds = \microtime(true) - $started;
        }
        if ($this->env->interrupted && $row->status === Row::OK) {
            $row->notes[] = 'interrupted during the run';
        }
        // The table keeps the figures of a row too short to judge, with the reason next to them.
        $short = RunLength::tooShort($row);
        if ($short !== null) {
            $row->notes[] = $short;
        }
    }

    /** Estimated seconds for the rows from $current on. */
    private function remaining(Row $current): float
    {
        $seconds = 0.0;
        $counting = false;
        foreach ($this->scenarios as $scenario) {
            foreach ($this->rows[$scenario->name()] as $row) {
                $counting = $counting || $row === $current;
                if ($counting) {
                    $seconds += $scenario->estimate($row);
                }
            }
        }
        return $seconds;
    }

    private function write(bool $final): void
    {
        $this->writer->write($this->scenarios, $this->rows, $this->unavailable, $this->startedAt, $final, $this->env->interrupted, $this->baseline);
    }

    private function trapSignals(): void
    {
        if (!\function_exists('pcntl_signal')) {
            return;
        }
        \pcntl_async_signals(true);
        $env = $this->env;
        $handler = static function (int $signal) use ($env): void {
            if ($env->interrupted) {
                // A second Ctrl-C: stop everything now and go.
                $env->processes->terminateAll(0.5);
                exit(130);
            }
            $env->interrupted = true;
            \fwrite(\STDERR, "\nweft bench: interrupted; stopping the servers and writing what was measured (Ctrl-C again to quit at once)\n");
        };
        \pcntl_signal(\SIGINT, $handler);
        \pcntl_signal(\SIGTERM, $handler);
        \pcntl_signal(\SIGHUP, $handler);
    }

    /** @return array<string, list<Row>> */
    public function rows(): array
    {
        return $this->rows;
    }
}
