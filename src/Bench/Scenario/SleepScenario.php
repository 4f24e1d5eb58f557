<?php

declare(strict_types=1);

namespace Weft\Bench\Scenario;

use Weft\Bench\Environment;
use Weft\Bench\Report\Chart;
use Weft\Bench\Report\Check;
use Weft\Bench\Report\Column;
use Weft\Bench\Report\Findings;
use Weft\Bench\Report\Format;
use Weft\Bench\Row;

/** docs/benchmarks.md, sleep: a handler that waits 10 ms; coroutine mode should serve many of them at once. */
final class SleepScenario extends HttpScenario
{
    public const WAIT = 0.010;
    /** "Near" a bound: at least this share of it. */
    private const NEAR = 0.80;
    /** A server using this share of its cores is at its CPU limit. */
    private const SATURATED = 0.90;
    /** usleep() through the hook: within this share of the Weft\sleep() row of the same configuration. */
    private const HOOKED_WITHIN = 0.10;
    /** The handler of each `--app`: Weft\sleep() (default), or plain usleep() suspended by the sleep hook. */
    private const APPS = ['weft' => 'sleep.php', 'usleep' => 'sleep-usleep.php'];

    public function name(): string
    {
        return 'sleep';
    }

    public function title(): string
    {
        return 'sleep — a 10 ms wait per request';
    }

    public function description(): string
    {
        return 'examples/sleep.php waits 10 ms with Weft\sleep(0.01) and answers "Hello World": the wait suspends only '
            . 'the request in coroutine mode and blocks the worker in sync mode. Published: with such a wait, a coroutine server '
            . 'did about 6x the requests of a thread-pool server (Netty) at concurrency 1000, keep-alive. The "netty" rows are that '
            . 'reference: Netty 4 from Debian, one event-loop thread handing each request to a pool of as many threads as the row has '
            . 'workers, each blocking 10 ms in Thread.sleep (so its bound is workers / 10 ms, like sync mode), after an unmeasured 2 s warm-up (1 s in --quick); skipped when Java is not installed.';
    }

    public function unavailable(Environment $env): ?string
    {
        return parent::unavailable($env) ?? self::missingFiles($env, \array_values(\array_intersect_key(self::APPS, \array_flip($this->apps()))));
    }

    /** @return list<string> the apps asked for (`--app`), default Weft\sleep()'s */
    private function apps(): array
    {
        return $this->settings->apps ?? ['weft'];
    }

    public function rows(Environment $env): array
    {
        $s = $this->settings;
        $modes = \array_values(\array_intersect($s->modes ?? ['sync', 'coroutine', 'netty'], ['sync', 'coroutine', 'netty']));
        $loops = $s->loops ?? self::defaultLoops($env);
        $rows = [];
        $named = $s->apps !== null;
        foreach ($this->apps() as $app) {
            // usleep() is about the sleep hook: coroutine mode, 1 worker, c=1000 unless asked otherwise.
            $plain = $app !== 'weft';
            foreach ($plain ? \array_values(\array_intersect($s->modes ?? ['coroutine'], ['sync', 'coroutine'])) : $modes as $mode) {
                foreach ($mode === 'netty' ? [null] : $loops as $loop) {
                    foreach ($s->workers ?? ($plain ? [1] : $s->axis([1, 2, 8, 32], [2, 8], null)) as $w) {
                        foreach ($s->concurrency ?? ($plain ? [1000] : [100, 1000]) as $c) {
                            $params = ['mode' => $mode, 'loop' => $loop, 'workers' => $w, 'concurrency' => $c];
                            if ($mode !== 'netty' && $named) {
                                $params['app'] = $app;
                            }
                            $row = new Row($this->name(), $params);
                            if (!isset(self::APPS[$app])) {
                                $row->skip(\sprintf('unknown app "%s" (sleep has %s)', $app, \implode(', ', \array_keys(self::APPS))));
                            }
                            $rows[] = $row;
                        }
                    }
                }
            }
        }
        return $this->preSkipAll($rows, $env);
    }

    public function run(Row $row, Environment $env): void
    {
        if ($row->param('mode') === 'netty') {
            // The thread-pool shape of the published comparison: the workers are the blocking pool's threads.
            $this->measureNetty($row, $env, 1, (int) (self::WAIT * 1000), (int) $row->param('workers'));
            return;
        }
        $this->measureHttp($row, $env, self::exampleFile($env, self::APPS[(string) ($row->param('app') ?? 'weft')]), self::serveArguments($row), self::expectBody('Hello World'));
    }

    public function columns(): array
    {
        return [
            ...($this->settings->apps !== null ? [Column::param('app', 'app')] : []),
            Column::param('mode', 'mode'),
            Column::param('loop', 'loop'),
            Column::param('workers', 'workers'),
            Column::param('conc.', 'concurrency'),
            new Column('bound req/s', fn (Row $r): string => Format::rate($this->bound($r))),
            ...Column::http(),
            ...$this->abColumns(),
            Column::status(),
        ];
    }

    /** The wait alone allows concurrency / 10 ms in coroutine mode and workers / 10 ms in sync mode. */
    private function bound(Row $row): float
    {
        $parallel = $row->param('mode') === 'coroutine' ? (int) $row->param('concurrency') : \min((int) $row->param('workers'), (int) $row->param('concurrency'));
        return $parallel / self::WAIT;
    }

    private function saturated(Row $row): bool
    {
        return ($row->number('cpu_pct') ?? 0) >= self::SATURATED * 100 * $this->serverCores;
    }

    public function charts(): array
    {
        $series = $this->settings->apps !== null ? ['app', 'mode', 'loop', 'workers'] : ['mode', 'loop', 'workers'];
        return [
            new Chart('sleep-rps.svg', 'sleep (10 ms): requests/s against concurrency', 'concurrency', 'concurrent connections', 'rps', 'requests/s', $series),
            new Chart('sleep-p99.svg', 'sleep (10 ms): p99 latency against concurrency', 'concurrency', 'concurrent connections', 'p99_ms', 'p99 latency (ms)', $series),
        ];
    }

    public function findings(array $rows): array
    {
        $ok = Findings::ok($rows);
        if ($ok === []) {
            return [Findings::NOTHING_RAN];
        }
        $out = [Findings::winner($ok, 'mode') . '.'];
        foreach (Findings::values($ok, 'concurrency') as $c) {
            $pairs = [];
            foreach (Findings::values($ok, 'workers') as $w) {
                $co = Findings::ok($ok, ['mode' => 'coroutine', 'workers' => $w, 'concurrency' => $c]);
                $sy = Findings::ok($ok, ['mode' => 'sync', 'workers' => $w, 'concurrency' => $c]);
                if ($co !== [] && $sy !== [] && $sy[0]->number('rps') > 0) {
                    $pairs[] = \sprintf('%d worker(s) %s', $w, Format::times($co[0]->number('rps') / $sy[0]->number('rps')));
                }
            }
            if ($pairs !== []) {
                $out[] = "At concurrency $c, coroutine mode served more than sync mode with the same workers by: " . \implode(', ', $pairs) . '.';
            }
        }
        foreach (Findings::ok($ok, ['mode' => 'sync']) as $row) {
            // Each request holds a sync worker for the whole wait: req/s x 10 ms is how many were busy.
            $busy = $row->number('rps') * self::WAIT;
            $workers = (int) $row->param('workers');
            if ($busy < 0.8 * \min($workers, (int) $row->param('concurrency'))) {
                $out[] = \sprintf('%s: %s req/s means about %.1f of its %d workers were busy at a time (each request holds a sync worker 10 ms): the connections were not spread over all workers.', $row->label(), Format::rate($row->number('rps')), $busy, $workers);
            }
        }
        foreach (Findings::ok($ok, ['mode' => 'coroutine']) as $row) {
            $share = $row->number('rps') / $this->bound($row);
            if ($share < self::NEAR) {
                $out[] = \sprintf('%s reached %d %% of its %s req/s bound%s.', $row->label(), (int) \round($share * 100), Format::rate($this->bound($row)), $this->saturated($row) ? ' with the server CPU saturated (' . Format::pct($row->number('cpu_pct')) . ' %)' : '');
            }
        }
        $cpu = Findings::cpuPerRequest($ok, 'mode');
        if ($cpu !== null) {
            $out[] = $cpu;
        }
        foreach ($this->hookedPairs($ok) as [$hooked, $weft]) {
            $out[] = \sprintf('%s: usleep() through the sleep hook %s req/s, Weft\\sleep() %s req/s (%s).', $hooked->label(), Format::rate($hooked->number('rps')), Format::rate($weft->number('rps')), Format::change($weft->number('rps'), $hooked->number('rps')));
        }
        $out[] = self::nettyLine($ok);
        $out[] = Findings::workersLine($ok, ['mode', 'loop', 'concurrency', 'app']);
        $out[] = Findings::errorsLine($rows);
        return $out;
    }

    /**
     * Each coroutine usleep() row with the Weft\sleep() row of the same configuration, when both ran.
     *
     * @param list<Row> $ok
     * @return list<array{0: Row, 1: Row}>
     */
    private function hookedPairs(array $ok): array
    {
        $pairs = [];
        foreach (Findings::ok($ok, ['app' => 'usleep', 'mode' => 'coroutine']) as $row) {
            $weft = Findings::ok($ok, ['app' => 'weft', 'mode' => 'coroutine', 'loop' => $row->param('loop'), 'workers' => $row->param('workers'), 'concurrency' => $row->param('concurrency')]);
            if ($weft !== []) {
                $pairs[] = [$row, $weft[0]];
            }
        }
        return $pairs;
    }

    public function checks(array $rows): array
    {
        $checks = [];
        if ($this->settings->apps !== null && \in_array('usleep', $this->settings->apps, true)) {
            $claim = \sprintf('usleep() in coroutine mode (sleep hook) within %d %% of Weft\\sleep() in the same configuration', (int) (self::HOOKED_WITHIN * 100));
            $pairs = $this->hookedPairs(Findings::ok($rows));
            $slow = \array_values(\array_map(static fn (array $p): string => $p[0]->label(), \array_filter($pairs, static fn (array $p): bool => $p[0]->number('rps') < (1 - self::HOOKED_WITHIN) * $p[1]->number('rps'))));
            $checks[] = $pairs === []
                ? Check::unknown($claim, 'no coroutine usleep row ran next to a Weft\\sleep row (run with --app weft,usleep)')
                : new Check(
                    $claim,
                    $slow === [],
                    \implode('; ', \array_map(static fn (array $p): string => \sprintf('w=%s c=%s: usleep %s vs Weft\\sleep %s req/s (%s)', $p[0]->param('workers'), $p[0]->param('concurrency'), Format::rate($p[0]->number('rps')), Format::rate($p[1]->number('rps')), Format::change($p[1]->number('rps'), $p[0]->number('rps'))), $pairs)),
                    $slow,
                );
        }
        return [
            ...$checks,
            $this->boundCheck(
                Findings::ok($rows, ['mode' => 'coroutine']),
                'coroutine mode near the bound min(concurrency / 0.010 s, CPU limit)',
                true,
            ),
            $this->boundCheck(
                Findings::ok($rows, ['mode' => 'sync']),
                'sync mode near workers / 0.010 s',
                false,
            ),
        ];
    }

    /** @param list<Row> $rows */
    private function boundCheck(array $rows, string $claim, bool $cpuLimitCounts): Check
    {
        if ($rows === []) {
            return Check::unknown($claim, 'no such row ran');
        }
        $claim .= \sprintf(' ("near": at least %d %% of the bound%s)', (int) (self::NEAR * 100), $cpuLimitCounts ? \sprintf(', or the server CPU at %d %%+ of its %d core(s)', (int) (self::SATURATED * 100), $this->serverCores) : '');
        $failing = [];
        $parts = [];
        foreach ($rows as $row) {
            $bound = $this->bound($row);
            $share = $row->number('rps') / $bound;
            $near = $share >= self::NEAR || ($cpuLimitCounts && $this->saturated($row));
            // Sync mode must not beat its bound by much either: that would mean the wait did not block.
            if (!$cpuLimitCounts && $share > 1.05) {
                $near = false;
            }
            if (!$near) {
                $failing[] = $row->label();
            }
            $parts[] = \sprintf('w=%s c=%s %s of %s (%d %%%s)', $row->param('workers'), $row->param('concurrency'), Format::rate($row->number('rps')), Format::rate($bound), (int) \round($share * 100), $this->saturated($row) ? ', CPU-bound' : '');
        }
        return new Check($claim, $failing === [], \implode('; ', $parts), $failing);
    }
}
