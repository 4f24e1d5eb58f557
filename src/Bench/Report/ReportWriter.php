<?php

declare(strict_types=1);

namespace Weft\Bench\Report;

use Weft\Bench\Build;
use Weft\Bench\Environment;
use Weft\Bench\Recommending;
use Weft\Bench\Row;
use Weft\Bench\RunLength;
use Weft\Bench\Runner;
use Weft\Bench\Scenario;

/** Writes report.md, results.json and the SVG charts of a run into its output folder. */
final class ReportWriter
{
    /** @param list<string> $argv the command line, for the report's header */
    public function __construct(private readonly Environment $env, private readonly array $argv)
    {
    }

    public function outDir(): string
    {
        return $this->env->outDir;
    }

    /**
     * @param list<Scenario> $scenarios
     * @param array<string, list<Row>> $rows
     * @param array<string, ?string> $unavailable
     */
    public function write(array $scenarios, array $rows, array $unavailable, float $startedAt, bool $final, bool $interrupted, ?Build $baseline = null): void
    {
        $elapsed = \microtime(true) - $startedAt;
        $results = [
            'weft_version' => \Weft\Version::VERSION,
            'command' => \implode(' ', $this->argv),
            'started_at' => \gmdate('c', (int) $startedAt),
            'elapsed_s' => \round($elapsed, 1),
            'complete' => $final && !$interrupted,
            'interrupted' => $interrupted,
            'settings' => $this->env->settings->toArray(),
            'machine' => $this->env->machine->toArray(),
            'server_php' => [
                'command' => $this->serverCommand(),
                'flags' => Environment::PHP_FLAGS,
                'extension' => $this->env->extensionPath(),
            ],
            'pinning' => $this->pinning(),
            'tools' => $this->env->tools->toArray(),
            'baseline' => $baseline?->toArray(),
            'recommendations' => [],
            'scenarios' => [],
        ];
        $markdown = '';
        $recommendations = '';
        foreach ($scenarios as $scenario) {
            $name = $scenario->name();
            $scenarioRows = $rows[$name] ?? [];
            // Findings, checks and advice are about this checkout; the baseline shows in the ratio table.
            $own = Runner::thisBuild($scenarioRows);
            $compared = $baseline !== null && $scenario->comparesBuilds();
            $charts = [];
            foreach ($scenario->charts() as $chart) {
                if ($compared) {
                    $chart = $chart->withSeries([...$chart->series, 'build']);
                }
                \file_put_contents($this->env->outDir . '/' . $chart->file, SvgChart::render($chart, $scenarioRows));
                $charts[] = $chart;
            }
            $findings = Findings::tidy($this->safely(fn () => $scenario->findings($own), []));
            // A verdict judges only rows that ran long enough; the others are named under the verdicts.
            $checks = $this->safely(fn () => $scenario->checks(RunLength::judgeable($own)), []);
            $short = RunLength::tooShortRows($own);
            $notes = $this->safely(fn () => $scenario->notes($this->env), []);
            if ($scenario instanceof Recommending) {
                $advice = $this->safely(fn () => $scenario->recommendation($own), null);
                if ($advice instanceof Recommendation) {
                    $results['recommendations'][$name] = $advice->toArray();
                    $recommendations .= $advice->markdown($final && !$interrupted);
                }
            }
            $results['scenarios'][$name] = [
                'title' => $scenario->title(),
                'description' => $scenario->description(),
                'unavailable' => $unavailable[$name] ?? null,
                'notes' => $notes,
                'rows' => \array_map(static fn (Row $r) => $r->toArray(), $scenarioRows),
                'findings' => $findings,
                'checks' => \array_map(static fn (Check $c) => $c->toArray(), $checks),
                'too_short' => \array_map(static fn (Row $r): array => ['row' => $r->label(), 'reason' => RunLength::tooShort($r)], $short),
                'charts' => \array_map(static fn (Chart $c) => $c->file, $charts),
                'comparison' => $compared ? Comparison::pairs($scenarioRows, $baseline->label) : null,
            ];
            $markdown .= $this->section($scenario, $scenarioRows, $unavailable[$name] ?? null, $charts, $findings, $checks, $notes, $compared ? $baseline : null, $short);
        }
        $markdown = $this->header($elapsed, $final, $interrupted, $baseline) . $recommendations . $markdown;
        self::atomicWrite($this->env->outDir . '/results.json', \json_encode($results, \JSON_PRETTY_PRINT | \JSON_UNESCAPED_SLASHES | \JSON_UNESCAPED_UNICODE | \JSON_PRESERVE_ZERO_FRACTION | \JSON_INVALID_UTF8_SUBSTITUTE) . "\n");
        self::atomicWrite($this->env->outDir . '/report.md', $markdown);
    }

    /** @template T @param \Closure(): T $compute @param T $fallback @return T */
    private function safely(\Closure $compute, mixed $fallback): mixed
    {
        try {
            return $compute();
        } catch (\Throwable $e) {
            return \is_array($fallback) ? ['(could not compute: ' . $e->getMessage() . ')'] : $fallback;
        }
    }

    private function header(float $elapsed, bool $final, bool $interrupted, ?Build $baseline): string
    {
        $env = $this->env;
        $m = $env->machine;
        $d = $m->details;
        $status = match (true) {
            $interrupted => '**interrupted** — the rows not run are marked so',
            !$final => '**in progress**',
            default => 'complete',
        };
        $out = "# Weft benchmark report\n\n";
        $out .= \sprintf("Run of `%s` started %s UTC, took %s (%s). %s matrix, %s s of load per row.\n\n",
            \implode(' ', $this->argv), \gmdate('Y-m-d H:i:s', (int) (\microtime(true) - $elapsed)), Format::seconds($elapsed), $status,
            $env->settings->quick ? 'Quick' : 'Full', \rtrim(\rtrim(\number_format($env->settings->duration(), 1), '0'), '.'));
        $out .= "## Machine and method\n\n";
        $out .= \sprintf("- CPU: %s, %d core(s); %s; %s memory.\n", $m->cpuModel, $m->cores, $m->kernel, Format::bytes($m->memTotal));
        $php = $d['server_php'] ?? [];
        $out .= \sprintf("- PHP %s. Resident servers run as `%s` — opcache %s, JIT %s%s.\n",
            \PHP_VERSION, $this->serverCommand(), ($php['opcache'] ?? false) ? 'on' : 'OFF', ($php['jit'] ?? false) ? 'on (' . ($php['jit_kind'] ?? '') . ')' : 'OFF',
            isset($php['error']) ? ' (' . $php['error'] . ')' : '');
        $out .= '- Loop backends: select; epoll: ' . ($env->epollUnavailable() ?? 'available (native extension ' . $env->extensionPath() . ')') . ".\n";
        $out .= '- ' . $this->pinning()['text'] . "\n";
        $out .= \sprintf("- Load: %s, one thread, keep-alive, `--latency --timeout 10s`%s. Line protocol and core benchmarks: Weft's own load clients (separate processes).\n",
            $d['wrk_version'] ?? 'wrk not installed', $env->settings->ab ? '; also `ab -k` (apache2-utils) for each HTTP row' : '');
        $out .= "- Server figures cover **all** of a server's processes (master, workers; nginx and php-fpm in fpm mode), sampled from /proc every 0.5 s during the load: "
            . "**CPU %** is their utime+stime over the run in % of one core; **CPU µs/req** is that CPU time divided by the requests served; "
            . "**RSS total** sums each process's resident set (pages shared between forked processes are counted once per process, so it overstates); "
            . "**PSS total** sums the proportional set sizes from smaps_rollup (each shared page divided among its sharers: the honest total). Both are the peak of the samples.\n";
        $missing = [];
        foreach (\array_keys(\Weft\Bench\Tools::KNOWN) as $tool) {
            if (!$env->tools->has($tool)) {
                $missing[] = \Weft\Bench\Tools::missing($tool);
            }
        }
        if ($missing !== []) {
            $out .= '- Missing: ' . \implode('; ', $missing) . ".\n";
        }
        if ($env->settings->portRange !== null) {
            $out .= \sprintf("- Servers listened only on ports %d-%d (`--port-range`).\n", ...$env->settings->portRange);
        }
        if ($baseline !== null) {
            $out .= \sprintf("- **Baseline `%s`**: %s. Each row of a scenario that compares builds ran on both builds, one right after the other (the order alternating from pair to pair), with the same load clients from this checkout; the tables show both and each scenario ends with the ratios this build / baseline.\n",
                $baseline->label, \implode('; ', $baseline->notes));
        }
        $out .= "- What each experiment reproduces and why is described with its table below, and in docs/benchmarks.md of the Weft source. "
            . "Published figures quoted there come from other machines; only figures of this run are compared.\n\n";
        return $out;
    }

    /**
     * @param list<Row> $rows
     * @param list<Chart> $charts
     * @param list<string> $findings
     * @param list<Check> $checks
     * @param list<string> $notes
     * @param list<Row> $short the rows left out of the verdicts
     */
    private function section(Scenario $scenario, array $rows, ?string $unavailable, array $charts, array $findings, array $checks, array $notes, ?Build $baseline, array $short = []): string
    {
        $out = '## ' . $scenario->title() . "\n\n" . $scenario->description() . "\n\n";
        if ($unavailable !== null) {
            $out .= "**Skipped: $unavailable.**\n\n";
        }
        foreach ($notes as $note) {
            $out .= "- $note\n";
        }
        if ($notes !== []) {
            $out .= "\n";
        }
        if ($rows !== []) {
            $columns = $scenario->columns();
            if ($baseline !== null) {
                \array_unshift($columns, Column::param('build', 'build'));
            }
            $out .= self::table($columns, $rows) . "\n";
        } else {
            $out .= "No row: the options leave this scenario's matrix empty.\n\n";
        }
        foreach ($charts as $chart) {
            $out .= \sprintf('![%s](%s) ', $chart->title, $chart->file);
        }
        if ($charts !== []) {
            $out .= "\n\n";
        }
        if ($baseline !== null) {
            $out .= Comparison::markdown($rows, $baseline->label);
        }
        if ($findings !== []) {
            $out .= '**Findings' . ($baseline !== null ? ' (this build)' : '') . '.** ' . \implode(' ', $findings) . "\n\n";
        }
        if ($checks !== []) {
            $out .= $scenario instanceof \Weft\Bench\Scenario\CoreScenario
                ? "**Targets, evaluated from the figures above:**\n\n"
                : "**What the experiment must show, evaluated from the figures above:**\n\n";
            $out .= self::verdicts($checks, $short) . "\n";
        }
        return $out;
    }

    /**
     * The verdict lines: each claim, its verdict, the rows that make it fail, and the rows left out of
     * every verdict because they ran too short to judge.
     *
     * @param list<Check> $checks
     * @param list<Row> $short
     */
    public static function verdicts(array $checks, array $short = []): string
    {
        $out = '';
        foreach ($checks as $check) {
            $mark = match ($check->holds) {
                true => '✅',
                false => '❌',
                null => '➖',
            };
            $failing = $check->holds === false && $check->failing !== [] ? ' (failing: ' . \implode('; ', $check->failing) . ')' : '';
            // "No such row ran" would hide that one did, too short to be judged.
            $evidence = $check->holds === null && $short !== [] ? $check->evidence . ' (rows too short to judge are left out: see below)' : $check->evidence;
            $out .= "- $mark **{$check->verdict()}**$failing — {$check->claim}: {$evidence}.\n";
        }
        if ($short !== []) {
            $out .= '- ➖ Left out of these verdicts, too short to judge (' . RunLength::MIN_ANSWERS_PER_CONNECTION . '+ answers per connection and a p99 under a third of the run are needed): '
                . \implode('; ', \array_map(static fn (Row $r): string => $r->label() . ' (' . \substr((string) RunLength::tooShort($r), \strlen('too short to judge: ')) . ')', $short)) . ".\n";
        }
        return $out;
    }

    /**
     * @param list<Column> $columns
     * @param list<Row> $rows
     */
    public static function table(array $columns, array $rows): string
    {
        $header = '| ' . \implode(' | ', \array_map(static fn (Column $c) => $c->header, $columns)) . " |\n";
        $header .= '|' . \implode('|', \array_map(static fn (Column $c) => $c->numeric ? '---:' : ':---', $columns)) . "|\n";
        foreach ($rows as $row) {
            $cells = [];
            foreach ($columns as $column) {
                try {
                    $cells[] = Format::cell(($column->cell)($row));
                } catch (\Throwable) {
                    $cells[] = Format::NONE;
                }
            }
            $header .= '| ' . \implode(' | ', $cells) . " |\n";
        }
        return $header;
    }

    private function serverCommand(): string
    {
        return 'php ' . \implode(' ', $this->env->phpFlags());
    }

    /** @return array{pinned: bool, server_cpus: ?string, load_cpus: ?string, text: string} */
    private function pinning(): array
    {
        if ($this->env->pinned()) {
            return [
                'pinned' => true,
                'server_cpus' => Environment::SERVER_CPU,
                'load_cpus' => Environment::LOAD_CPU,
                'text' => 'Pinning: every server process (and its nginx/php-fpm in fpm mode) runs on CPU ' . Environment::SERVER_CPU
                    . ' (`taskset -c ' . Environment::SERVER_CPU . '`); load generators and the runner itself run on CPU ' . Environment::LOAD_CPU
                    . ' (`taskset -c ' . Environment::LOAD_CPU . '`). The server side therefore has one core: 100 % CPU is its ceiling. '
                    . 'A local MariaDB of this user is moved to CPU ' . Environment::LOAD_CPU . ' while the sql3 and framework rows run (their notes say where it ran); '
                    . 'whatever else the server calls (the database or upstream of an app under bench app) is not pinned.',
            ];
        }
        $why = $this->env->machine->cores < 2 ? 'only one core' : 'taskset missing (Debian package util-linux)';
        return ['pinned' => false, 'server_cpus' => null, 'load_cpus' => null, 'text' => "Pinning: none ($why): server and load share the CPU, so the figures understate the server."];
    }

    private static function atomicWrite(string $path, string $contents): void
    {
        $tmp = $path . '.tmp';
        \file_put_contents($tmp, $contents);
        \rename($tmp, $path);
    }
}
