<?php

declare(strict_types=1);

namespace Weft\Bench\Scenario;

use Weft\Bench\Adaptive;
use Weft\Bench\Environment;
use Weft\Bench\Load\Probe;
use Weft\Bench\Recommending;
use Weft\Bench\Report\Chart;
use Weft\Bench\Report\Column;
use Weft\Bench\Report\Findings;
use Weft\Bench\Report\Format;
use Weft\Bench\Report\Recommendation;
use Weft\Bench\Row;

/**
 * `bin/weft bench app APP.php`: the user's own application under load, in each mode, across worker
 * counts and concurrency levels, ending with a recommendation computed from the rows.
 *
 * The sweep adapts to what it measures unless the user fixes the axes. Worker counts start from the
 * server's cores (coroutine: one per core; sync and fpm: several per core, since a blocked worker holds
 * its core idle), and grow while the best configuration of a mode is the largest one tried and its CPU
 * stayed idle. Each configuration climbs a concurrency ladder one step at a time and stops where more
 * concurrency stopped adding throughput and p99 passed the target, or where p99 went far past it, or
 * errors appeared: the knee is inside the measured range without paying for the steps beyond it.
 */
final class AppScenario extends HttpScenario implements Adaptive, Recommending
{
    /** Concurrency ladders: 1 first, since a lone request shows how long the app takes and how much is CPU. */
    private const LADDER = [1, 4, 16, 64, 256, 1024];
    private const QUICK_LADDER = [1, 16, 128, 512];
    /** More concurrency "adds throughput" when requests/s grow by at least this share. */
    private const GAIN = 0.05;
    /** A configuration's climb stops when p99 passes this many times the target. */
    private const FAR_PAST = 4.0;
    /** ... or when more than this share of requests failed. */
    private const ERROR_SHARE = 0.01;
    /** A server below this share of its cores is not CPU-bound. */
    private const IDLE_CPU = 0.80;
    private const MAX_WORKERS = ['coroutine' => 64, 'sync' => 256, 'fpm' => 256];
    /** Rounds of "more workers" per mode: quick runs add one at most. */
    private const WORKER_ROUNDS = 2;

    private ?string $script = null;
    /** @var int|null|false the servers' memory_limit in bytes (false: not read yet) */
    private int|null|false $memoryLimit = false;
    private ?Environment $env = null;
    /** @var array<string, int> mode => rounds of extra workers added */
    private array $workerRounds = [];

    public function __construct(\Weft\Bench\Settings $settings, public readonly AppTarget $target)
    {
        parent::__construct($settings);
    }

    public function name(): string
    {
        return 'app';
    }

    public function title(): string
    {
        return 'app — ' . \basename($this->target->app) . ' under load';
    }

    public function description(): string
    {
        $t = $this->target;
        $requests = $t->script !== null
            ? 'the requests of the wrk script ' . $t->script
            : \sprintf('%s %s', $t->method, \implode(', ', $t->paths)) . ($t->body !== null ? \sprintf(' with a %d-byte body', \strlen($t->body)) : '')
                . ($t->headers !== [] ? ' and the headers ' . \implode(', ', \array_keys($t->headers)) : '');
        return \sprintf(
            '%s served by Weft in each mode, loaded with %s (keep-alive). %s The recommendation above is computed from these rows with a p99 target of %s ms.',
            $t->app, $requests,
            $this->settings->concurrency === null
                ? 'Each configuration (mode, workers) climbs a concurrency ladder (' . \implode(', ', $this->ladder()) . ') and stops once more concurrency stops adding throughput past the p99 target, p99 goes far past it, or errors appear; worker counts grow while the best one tried left the CPU idle.'
                : 'Concurrency levels as given.',
            Format::number($t->p99Ms, 0),
        );
    }

    public function unavailable(Environment $env): ?string
    {
        if (!\is_file($this->target->app)) {
            return "{$this->target->app} not found";
        }
        if ($this->target->script !== null && !\is_file($this->target->script)) {
            return "wrk script {$this->target->script} not found";
        }
        return parent::unavailable($env);
    }

    /** @return list<int> */
    private function ladder(): array
    {
        return $this->settings->quick ? self::QUICK_LADDER : self::LADDER;
    }

    /** @return list<string> */
    private function modes(): array
    {
        return $this->settings->modes ?? ['coroutine', 'sync'];
    }

    /**
     * Worker counts from the machine: the server's cores (one when pinned) and the memory available.
     *
     * @return list<int>
     */
    private function workers(string $mode, Environment $env): array
    {
        if ($this->settings->workers !== null) {
            return $this->settings->workers;
        }
        $cores = $env->serverCores();
        $counts = match (true) {
            $mode === 'coroutine' => $this->settings->quick ? [$cores] : [$cores, 2 * $cores],
            $this->settings->quick => [4 * $cores, 16 * $cores],
            default => [2 * $cores, 8 * $cores, 32 * $cores],
        };
        return \array_values(\array_unique($counts));
    }

    public function rows(Environment $env): array
    {
        $rows = [];
        // Each loop given is a configuration of its own (fpm has none); by default the best one available.
        $loops = $this->settings->loops ?? [self::defaultLoops($env)[0]];
        foreach ($this->modes() as $mode) {
            foreach ($mode === 'fpm' ? [$loops[0]] : $loops as $loop) {
                foreach ($this->workers($mode, $env) as $w) {
                    foreach ($this->settings->concurrency ?? [$this->ladder()[0]] as $c) {
                        $rows[] = $this->row($mode, $loop, $w, $c);
                    }
                }
            }
        }
        return $this->preSkipAll($rows, $env);
    }

    private function row(string $mode, string $loop, int $workers, int $concurrency): Row
    {
        $params = ['mode' => $mode, 'loop' => $mode === 'fpm' ? null : $loop, 'workers' => $workers, 'concurrency' => $concurrency];
        // `--app-instances N`: the framework instances of each coroutine worker (serve --app-instances).
        if ($mode === 'coroutine' && $this->settings->instances !== null) {
            $params['instances'] = $this->settings->instances[0];
        }
        return new Row($this->name(), $params);
    }

    /**
     * PHP's memory_limit in the servers' PHP, in bytes (-1: none), or null when it cannot be read: a
     * worker's framework instances must fit under it.
     */
    private function memoryLimit(Environment $env): ?int
    {
        if ($this->memoryLimit === false) {
            $output = [];
            \exec(\implode(' ', \array_map('escapeshellarg', [$env->php(), ...$env->phpFlags(), '-r', 'echo ini_get("memory_limit");'])) . ' 2>/dev/null', $output, $status);
            $this->memoryLimit = $status === 0 ? Recommendation::bytes(\trim(\implode('', $output))) : null;
        }
        return $this->memoryLimit;
    }

    public function next(array $rows, Environment $env): array
    {
        if ($this->settings->concurrency !== null) {
            return [];
        }
        // A mode whose server cannot start has no climb to continue.
        $rows = \array_values(\array_filter($rows, fn (Row $r): bool => !isset($this->bootFailures[(string) $r->param('mode')])));
        $more = [];
        $configs = Findings::groupBy($rows, ['mode', 'loop', 'workers']);
        foreach ($configs as $config) {
            $step = $this->nextStep($config);
            if ($step !== null) {
                $last = $config[\count($config) - 1];
                $more[] = $this->row((string) $last->param('mode'), (string) ($last->param('loop') ?? 'select'), (int) $last->param('workers'), $step);
            }
        }
        if ($more === [] && $this->settings->workers === null) {
            // Every climb is over: where a mode's best configuration is its largest and left the CPU idle,
            // more workers may serve more; measure instead of guessing.
            foreach ($this->modes() as $mode) {
                $extra = $this->moreWorkers($mode, Findings::ok($rows, ['mode' => $mode]), $rows, $env);
                if ($extra !== null) {
                    $more[] = $extra;
                }
            }
        }
        return $this->preSkipAll($more, $env);
    }

    /**
     * The next concurrency of a configuration's climb, or null when it is over.
     *
     * @param list<Row> $config its rows in the order they ran
     */
    public function nextStep(array $config): ?int
    {
        $last = $config[\count($config) - 1];
        if (!$last->isOk() || $last->number('rps') === null) {
            return null;
        }
        $requests = (float) ($last->number('requests') ?? 0);
        if ($last->errorTotal() > self::ERROR_SHARE * \max(1.0, $requests + $last->errorTotal())) {
            return null;
        }
        $p99 = $last->number('p99_ms');
        $target = $this->target->p99Ms;
        if ($p99 === null || $p99 > self::FAR_PAST * $target) {
            return null;
        }
        if (\count($config) >= 2) {
            $gains = [];
            for ($i = \max(1, \count($config) - 2); $i < \count($config); $i++) {
                $before = $config[$i - 1]->number('rps');
                $gains[] = $before > 0 ? $config[$i]->number('rps') / $before - 1 : 1.0;
            }
            $flat = \end($gains) < self::GAIN;
            if ($flat && ($p99 > $target || (\count($gains) === 2 && $gains[0] < self::GAIN))) {
                return null;
            }
        }
        foreach ($this->ladder() as $c) {
            if ($c > (int) $last->param('concurrency')) {
                return $c;
            }
        }
        return null;
    }

    /**
     * A configuration with more workers for a mode, when its best one so far is the largest tried, met the
     * target, and left the server's CPU idle: the workers, not the machine, set the pace.
     *
     * @param list<Row> $modeRows
     * @param list<Row> $all
     */
    private function moreWorkers(string $mode, array $modeRows, array $all, Environment $env): ?Row
    {
        $rounds = $this->workerRounds[$mode] ?? 0;
        if ($modeRows === [] || $rounds >= ($this->settings->quick ? 1 : self::WORKER_ROUNDS)) {
            return null;
        }
        $eligible = \array_values(\array_filter($modeRows, fn (Row $r): bool => Recommendation::eligible($r, $this->target->p99Ms)));
        if ($eligible === [] && \array_filter($modeRows, static fn (Row $r): bool => Recommendation::errorShare($r) <= Recommendation::MAX_ERROR_SHARE) === []) {
            // Every row of the mode failed requests: more workers would fail them too.
            return null;
        }
        $best = Findings::best($eligible === [] ? $modeRows : $eligible);
        $largest = \max(\array_map(static fn (Row $r): int => (int) $r->param('workers'), $modeRows));
        if ($best === null || (int) $best->param('workers') !== $largest) {
            return null;
        }
        if (($best->number('cpu_pct') ?? 100.0) >= self::IDLE_CPU * 100 * $env->serverCores()) {
            return null;
        }
        $workers = $largest * 4;
        if ($workers > self::MAX_WORKERS[$mode] || $env->memoryRefuses($workers + 1, 40 << 20) !== null) {
            return null;
        }
        $this->workerRounds[$mode] = $rounds + 1;
        // Start the climb where this many workers can be busy: lower steps would only repeat the smaller configuration.
        $start = $this->ladder()[0];
        foreach ($this->ladder() as $c) {
            if ($c <= (int) $best->param('concurrency')) {
                $start = $c;
            }
        }
        return $this->row($mode, (string) ($best->param('loop') ?? 'select'), $workers, $start);
    }

    public function run(Row $row, Environment $env): void
    {
        if (isset($this->bootFailures[(string) $row->param('mode')])) {
            // Every configuration of the mode would fail the same way: say so once, not once a row.
            $row->skip(\sprintf('not run: as in the first %s row, %s', $row->param('mode'), $this->bootFailures[(string) $row->param('mode')]));
            return;
        }
        $t = $this->target;
        $script = $t->script;
        if ($script === null && $t->needsScript()) {
            if ($this->script === null) {
                $this->script = $env->outDir . '/app-requests.lua';
                \file_put_contents($this->script, $t->wrkScript());
            }
            $script = $this->script;
        }
        $request = "{$t->method} {$t->paths[0]}";
        $scriptCheck = null;
        $check = static function (array $answer) use ($t, $request, &$scriptCheck): ?string {
            if ($answer['status'] >= 200 && $answer['status'] < 400) {
                return null;
            }
            $problem = "$request answered status {$answer['status']} (body: " . \substr($answer['body'], 0, 160) . ')';
            if ($t->script !== null) {
                // The script, not this request, makes the load: its own failures show in the errors column.
                $scriptCheck = $problem;
                return null;
            }
            return $problem . ($answer['status'] === 404 || $answer['status'] === 405 ? '; give the request the app expects with --url, --method, --header, --body' : '');
        };
        $probeSeconds = null;
        $probe = static function (int $port) use ($t, $env, &$probeSeconds): array {
            $started = \microtime(true);
            $answer = Probe::request('127.0.0.1', $port, $t->method, $t->paths[0], $t->headers, $t->body, 15.0, static fn (): bool => $env->interrupted);
            $probeSeconds = \microtime(true) - $started;
            return $answer;
        };
        $arguments = self::serveArguments($row);
        if ($row->param('instances') !== null) {
            $arguments = [...$arguments, '--app-instances', (string) $row->param('instances')];
        }
        $this->env = $env;
        $server = $this->startServer($row, $env, $t->app, $arguments, $t->env);
        if ($server === null) {
            return;
        }
        $log = $server->process->stderrFile;
        // A worker boots its first framework instance as it starts; the others boot under the load.
        $rssBefore = $row->param('instances') !== null ? self::workerRss($server) : null;
        try {
            $this->loadServer($row, $env, $server, $check, $t->paths[0], $script, null, \Weft\Bench\Load\Wrk::TIMEOUT, $probe);
            if ($rssBefore !== null && $row->isOk() && ($rssAfter = self::workerRss($server)) !== null) {
                $row->metrics['worker_rss_start'] = $rssBefore;
                $row->metrics['worker_rss_bytes'] = $rssAfter;
                $booted = self::instancesBooted($server, $row);
                if ($booted !== null) {
                    $row->metrics['instances_booted'] = $booted;
                }
            }
            if ($env->interrupted && !$row->isOk()) {
                $row->skip('interrupted');
            }
            if ($row->isOk() && (int) ($row->number('requests') ?? 0) === 0) {
                // wrk counts only the requests that completed within the row: none is no figure at all.
                $seconds = $env->settings->duration();
                $took = $probeSeconds === null ? '' : 'the check request alone took ' . Format::ms($probeSeconds * 1000) . ' ms';
                $row->fail(\sprintf('no request completed in the row\'s %s s of load', Format::number($seconds, \fmod($seconds, 1.0) === 0.0 ? 0 : 1))
                    . ($probeSeconds !== null && $probeSeconds < $seconds / 2
                        // Fast alone, yet nothing counted: wrk could not read the answers.
                        ? ", although $took: wrk could not read the answers (its output is in the logs folder)"
                        : ($took === '' ? '' : " ($took)") . ': give a --duration well above the time a request takes (and a --p99 above it)'));
            }
            if ($scriptCheck !== null) {
                $row->notes[] = "check request: $scriptCheck; the wrk script's own requests were loaded anyway (their failures are in the errors column)";
            }
        } finally {
            $note = $server->stop();
            if ($note !== null) {
                $row->notes[] = "server $note";
            }
        }
        $text = (string) @\file_get_contents($log);
        $problems = self::logProblems($text);
        if ($problems['errors'] > 0 || $problems['worker_exits'] > 0) {
            $row->metrics['log'] = $problems;
        }
        if ($problems['errors'] > 0) {
            $row->notes[] = \sprintf('server log: %s error line(s), the first: %s', Format::number($problems['errors'], 0), $problems['first_error']);
        }
        if ($problems['worker_exits'] > 0) {
            $row->notes[] = \sprintf('server log: a worker ended %s time(s) during the row and was replaced, the first %s', Format::number($problems['worker_exits'], 0), $problems['first_exit']);
        }
        $blocked = self::blockedCalls($text);
        if ($blocked !== []) {
            $row->metrics['blocked'] = $blocked;
            $row->notes[] = 'server log: ' . \array_sum($blocked) . ' "blocked" line(s): ' . \implode(', ', \array_map(static fn (string $call, int $n) => "$call ×$n", \array_keys($blocked), $blocked));
        }
    }

    /**
     * What went wrong in the app during a row, from the server's log: the requests that failed with an
     * error (an uncaught exception: the client got a 500) and the workers that ended and were replaced
     * (exit() in sync mode, a fatal error, a crash). A user whose app fails under load reads the cause
     * here instead of only a count of non-2xx answers.
     *
     * @return array{errors: int, first_error: ?string, worker_exits: int, first_exit: ?string}
     */
    public static function logProblems(string $log): array
    {
        $errors = \preg_match_all('/\] error: (.*)(?:\R\s+at (\S+))?/', $log, $e);
        $exits = \preg_match_all('/\] warning: Worker \d+ \(pid \d+\) ((?:exited with code|killed by signal) \d+[^;\r\n]*)/', $log, $x);
        return [
            'errors' => $errors,
            'first_error' => $errors > 0 ? \trim($e[1][0]) . ($e[2][0] !== '' ? " (at {$e[2][0]})" : '') : null,
            'worker_exits' => $exits,
            'first_exit' => $exits > 0 ? \trim($x[1][0]) : null,
        ];
    }

    /**
     * What the blocking-call detector logged, call => count. It writes lines that say a coroutine
     * "blocked" and name the call; the format is not fixed, so this reads any line with the word and
     * takes the first call-like token (`name(` or `name()`) as the call, "unknown" when there is none.
     *
     * @return array<string, int>
     */
    public static function blockedCalls(string $log): array
    {
        $calls = [];
        foreach (\preg_split('/\R/', $log) ?: [] as $line) {
            if (!\preg_match('/\bblock(ed|ing call)\b/i', $line) || \preg_match('/\bnon-?blocking\b/i', $line)) {
                continue;
            }
            $call = \preg_match('/([A-Za-z_\\\\][A-Za-z0-9_\\\\:>-]*)\(\)?/', $line, $m) ? \rtrim($m[1], ':->') : 'unknown';
            $calls[$call] = ($calls[$call] ?? 0) + 1;
        }
        \arsort($calls);
        return $calls;
    }

    public function columns(): array
    {
        return [
            Column::param('mode', 'mode'),
            Column::param('loop', 'loop'),
            Column::param('workers', 'workers'),
            ...($this->settings->instances !== null ? [Column::param('inst.', 'instances')] : []),
            Column::param('conc.', 'concurrency'),
            ...Column::http(),
            ...($this->settings->instances !== null ? [new Column('worker RSS', static fn (Row $r): string => Format::bytes($r->number('worker_rss_bytes')))] : []),
            // Whether the recommendation may pick the row, and if not why: a fast row that failed requests is out too.
            new Column('candidate', fn (Row $r): string => match (true) {
                !$r->isOk() => Format::NONE,
                Recommendation::eligible($r, $this->target->p99Ms) => 'yes',
                ($r->number('p99_ms') ?? \INF) > $this->target->p99Ms => 'no: p99',
                default => 'no: errors',
            }, false),
            ...$this->abColumns(),
            Column::status(),
        ];
    }

    public function charts(): array
    {
        // With several loops each is a line of its own: mode and workers alone would merge their points.
        $series = \count($this->settings->loops ?? []) > 1 ? ['mode', 'loop', 'workers'] : ['mode', 'workers'];
        return [
            new Chart('app-rps.svg', 'app: requests/s against concurrency', 'concurrency', 'concurrent connections', 'rps', 'requests/s', $series),
            new Chart('app-p99.svg', 'app: p99 latency against concurrency', 'concurrency', 'concurrent connections', 'p99_ms', 'p99 latency (ms)', $series),
        ];
    }

    public function findings(array $rows): array
    {
        $ok = Findings::ok($rows);
        if ($ok === []) {
            return [Findings::NOTHING_RAN];
        }
        return [
            Findings::winner($ok, 'mode') . '.',
            Findings::cpuPerRequest($ok, 'mode'),
            Findings::workersLine($ok, ['mode', 'loop', 'concurrency']),
            Findings::errorsLine($rows),
        ];
    }

    public function recommendation(array $rows): Recommendation
    {
        $request = $this->target->toArray();
        unset($request['app'], $request['p99_target_ms']);
        return Recommendation::compute($rows, $this->target->p99Ms, $this->serverCores, $this->target->app, $request + ['env' => \array_keys($this->target->env)], $this->env === null ? null : $this->memoryLimit($this->env));
    }

    public function checks(array $rows): array
    {
        return [];
    }

    public function notes(Environment $env): array
    {
        $notes = ['Server figures cover every process of the server; a database or upstream the app calls is not counted (nor pinned).'];
        if ($this->target->env !== []) {
            $notes[] = 'Server environment: ' . \implode(', ', \array_keys($this->target->env)) . '.';
        }
        return $notes;
    }
}
