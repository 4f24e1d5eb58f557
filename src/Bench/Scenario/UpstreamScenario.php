<?php

declare(strict_types=1);

namespace Weft\Bench\Scenario;

use Weft\Bench\Environment;
use Weft\Bench\Process\Service;
use Weft\Bench\Process\ServiceFailed;
use Weft\Bench\Report\Chart;
use Weft\Bench\Report\Check;
use Weft\Bench\Report\Column;
use Weft\Bench\Report\Findings;
use Weft\Bench\Report\Format;
use Weft\Bench\Row;

/**
 * docs/benchmarks.md, upstream: every request calls an upstream that answers after a delay. The scenario starts its own
 * delay server (examples/delay-server.php, on the load CPU: it stands for a remote API).
 *
 * `--app` picks the handler (docs/benchmarks.md, the `--app` option): `weft` (default) calls through Weft's HTTP client
 * (examples/upstream.php); `curl` and `streams` are the same call written as plain PHP code has it,
 * with curl_exec() (examples/upstream-curl.php) and file_get_contents() (examples/upstream-streams.php),
 * which suspend only through the extension's hooks: their coroutine rows come twice, hooks on and
 * hooks off (`--hooks none`, the blocking baseline).
 */
final class UpstreamScenario extends HttpScenario
{
    private const CONCURRENCY = 100;
    private const WITHIN = 0.05;
    /** The handler of each `--app`. */
    private const APPS = ['weft' => 'upstream.php', 'curl' => 'upstream-curl.php', 'streams' => 'upstream-streams.php'];

    public function name(): string
    {
        return 'upstream';
    }

    public function title(): string
    {
        return 'upstream — a slow upstream HTTP API';
    }

    private function delay(): float
    {
        return $this->settings->quick ? 1.0 : 3.0;
    }

    /** wrk runs whole seconds; a length that is not a multiple of the delay keeps the last cycle whole. */
    private function seconds(): int
    {
        $delay = $this->delay();
        if ($this->settings->duration !== null) {
            return (int) \max(\round($this->settings->duration), 3 * $delay);
        }
        return $this->settings->quick ? 4 : (int) (10 * $delay + 1);
    }

    /**
     * The most a perfect server can complete in the run: every connection finishes one request per
     * delay, and a cycle still in flight when wrk stops does not count.
     */
    public function bound(int $concurrency, float $delay, float $seconds, ?float $measured = null): float
    {
        return $concurrency * (\ceil($seconds / $delay - 1e-9) - 1) / ($measured ?? $seconds);
    }

    public function description(): string
    {
        $d = $this->delay();
        return \sprintf(
            'examples/upstream.php calls a local delay server (examples/delay-server.php, %s s per answer) through Weft\'s HTTP client '
            . 'and returns its body; wrk runs %d s at concurrency %d with a 10 s timeout. Published (100 connections, 10 s timeout, 3 s '
            . 'delay): blocking workers x20 4 req/s, x200 14 req/s, a coroutine server 11 req/s — all far below 100 / 3 s = 33 req/s, with '
            . 'timeouts. Bound here: %d connections / %s s = %s req/s steady; %s req/s for a %d s run, in which the cycle in flight when '
            . 'wrk stops cannot count.',
            Format::number($d, 0), $this->seconds(), self::CONCURRENCY, self::CONCURRENCY, Format::number($d, 0), Format::rate(self::CONCURRENCY / $d),
            Format::rate($this->bound(self::CONCURRENCY, $d, $this->seconds())), $this->seconds(),
        );
    }

    public function unavailable(Environment $env): ?string
    {
        return parent::unavailable($env) ?? self::missingFiles($env, ['delay-server.php', ...\array_map(static fn (string $app): string => self::APPS[$app] ?? $app, $this->apps())]);
    }

    /** @return list<string> the apps asked for (`--app`), default the Weft client's */
    private function apps(): array
    {
        return $this->settings->apps ?? ['weft'];
    }

    public function rows(Environment $env): array
    {
        $s = $this->settings;
        $rows = [];
        $named = $s->apps !== null;
        foreach ($this->apps() as $app) {
            // The plain-PHP handlers are about the hooks: coroutine mode, 2 workers, unless asked otherwise.
            $plain = $app !== 'weft';
            foreach (\array_values(\array_intersect($s->modes ?? ($plain ? ['coroutine'] : ['sync', 'coroutine']), ['sync', 'coroutine'])) as $mode) {
                $workers = $s->workers ?? ($plain ? [2] : ($mode === 'sync' ? ($s->quick ? [2, 20] : [2, 20, 200]) : ($s->quick ? [2] : [2, 20])));
                foreach ($s->loops ?? self::defaultLoops($env) as $loop) {
                    foreach ($workers as $w) {
                        foreach ($s->concurrency ?? [self::CONCURRENCY] as $c) {
                            $params = ['mode' => $mode, 'loop' => $loop, 'workers' => $w, 'concurrency' => $c, 'delay' => $this->delay()];
                            if (!$named) {
                                $rows[] = new Row($this->name(), $params);
                                continue;
                            }
                            foreach ($plain && $mode === 'coroutine' ? ['on', 'off'] : [null] as $hooks) {
                                $row = new Row($this->name(), $params + ['app' => $app, 'hooks' => $hooks]);
                                if (!isset(self::APPS[$app])) {
                                    $row->skip(\sprintf('unknown app "%s" (upstream has %s)', $app, \implode(', ', \array_keys(self::APPS))));
                                }
                                $rows[] = $row;
                            }
                        }
                    }
                }
            }
        }
        return $this->preSkipAll($rows, $env);
    }

    protected function preSkip(Row $row, Environment $env): ?string
    {
        $app = $row->param('app');
        if ($app === 'curl' && !\extension_loaded('curl')) {
            return 'the curl extension is not loaded (Debian: php8.2-curl)';
        }
        if ($row->param('hooks') === 'on' && $env->extensionPath() === null) {
            return 'the hooks need the weft extension (bash scripts/build-ext.sh)';
        }
        return parent::preSkip($row, $env);
    }

    public function estimate(Row $row): float
    {
        return $row->status === Row::PENDING ? $this->seconds() + 1.5 + $this->delay() : 0.0;
    }

    public function run(Row $row, Environment $env): void
    {
        $delay = $this->delay();
        try {
            $upstream = Service::start(
                $env->processes,
                [...$env->loadPrefix(), $env->php(), self::exampleFile($env, 'delay-server.php'), '--host', '127.0.0.1', '--port', (string) $env->port(), '--delay', (string) $delay],
                $env->logBase('upstream-delay-server'),
            );
        } catch (ServiceFailed $e) {
            $row->fail('delay server did not start: ' . $e->getMessage());
            return;
        }
        try {
            $started = 0.0;
            $check = static function (array $answer) use ($delay, &$started): ?string {
                $took = \microtime(true) - $started;
                if ($answer['status'] !== 200) {
                    return "status {$answer['status']} (body: " . \substr($answer['body'], 0, 160) . ')';
                }
                // An answer faster than the delay did not come from the upstream.
                return $took >= $delay * 0.9 ? null : \sprintf('answered in %.2f s, before the upstream\'s %.1f s delay', $took, $delay);
            };
            $arguments = self::serveArguments($row);
            if ($row->param('hooks') !== null) {
                \array_push($arguments, '--hooks', $row->param('hooks') === 'on' ? 'all' : 'none');
            }
            $app = self::APPS[(string) ($row->param('app') ?? 'weft')];
            $server = $this->startServer($row, $env, self::exampleFile($env, $app), $arguments, ['UPSTREAM_URL' => "http://127.0.0.1:{$upstream->port}/"]);
            if ($server === null) {
                return;
            }
            try {
                $started = \microtime(true);
                $this->loadServer($row, $env, $server, $check, '/', null, $this->seconds());
                if ($row->isOk()) {
                    $row->metrics['bound_rps'] = \round($this->bound((int) $row->param('concurrency'), $delay, $this->seconds(), $row->number('duration_s')), 2);
                }
            } finally {
                $note = $server->stop();
                if ($note !== null) {
                    $row->notes[] = "server $note";
                }
            }
        } finally {
            $upstream->stop(3.0);
        }
    }

    public function columns(): array
    {
        return [
            ...($this->settings->apps !== null ? [Column::param('app', 'app'), Column::param('hooks', 'hooks')] : []),
            Column::param('mode', 'mode'),
            Column::param('loop', 'loop'),
            Column::param('workers', 'workers'),
            Column::param('conc.', 'concurrency'),
            Column::param('delay s', 'delay'),
            new Column('bound req/s', static fn (Row $r): string => Format::rate($r->number('bound_rps'))),
            ...Column::http(),
            ...$this->abColumns(),
            Column::status(),
        ];
    }

    public function charts(): array
    {
        return [
            new Chart('upstream-rps.svg', 'upstream: requests/s against workers', 'workers', 'workers', 'rps', 'requests/s', ['mode', 'loop']),
            new Chart('upstream-p99.svg', 'upstream: p99 latency against workers', 'workers', 'workers', 'p99_ms', 'p99 latency (ms)', ['mode', 'loop']),
        ];
    }

    public function findings(array $rows): array
    {
        $ok = Findings::ok($rows);
        if ($ok === []) {
            return [Findings::NOTHING_RAN];
        }
        $out = [Findings::winner($ok, 'mode') . '.'];
        $parts = [];
        foreach ($ok as $row) {
            $bound = $row->number('bound_rps');
            $parts[] = \sprintf('%s %d %%%s', $row->label(), $bound > 0 ? (int) \round($row->number('rps') / $bound * 100) : 0, ($row->metric('errors')['timeout'] ?? 0) > 0 ? ' with ' . $row->metric('errors')['timeout'] . ' timeouts' : '');
        }
        $out[] = 'Share of the bound reached: ' . \implode('; ', $parts) . '.';
        foreach (Findings::ok($ok, ['mode' => 'sync']) as $row) {
            // A blocking worker serves one request per delay.
            $workersBound = \min((int) $row->param('workers'), (int) $row->param('concurrency')) / (float) $row->param('delay');
            $out[] = \sprintf(
                '%s: blocking workers allow at most %s req/s (one request per worker per %s s); it reached %s (%d %%).',
                $row->label(), Format::rate($workersBound), Format::number((float) $row->param('delay'), 0), Format::rate($row->number('rps')), (int) \round($row->number('rps') / $workersBound * 100),
            );
        }
        foreach (['curl', 'streams'] as $app) {
            // The same plain-PHP handler with the hooks on and off, side by side.
            $on = Findings::ok($ok, ['app' => $app, 'hooks' => 'on']);
            $off = Findings::ok($ok, ['app' => $app, 'hooks' => 'off']);
            if ($on !== [] && $off !== []) {
                $best = static fn (array $rows): float => \max(\array_map(static fn (Row $r): float => (float) $r->number('rps'), $rows));
                $out[] = \sprintf(
                    '%s handler (unchanged blocking code): %s req/s with the hooks on, %s req/s with them off (%s x).',
                    $app, Format::rate($best($on)), Format::rate($best($off)), $best($off) > 0 ? Format::number($best($on) / $best($off), 1) : '∞',
                );
            }
        }
        $out[] = Findings::workersLine($ok, ['mode', 'loop', 'concurrency', 'app', 'hooks']);
        $out[] = Findings::errorsLine($rows);
        return $out;
    }

    public function checks(array $rows): array
    {
        $claim = \sprintf('coroutine mode within %d %% of the bound with zero timeouts', (int) (self::WITHIN * 100));
        // A hooks-off row is the blocking baseline: it is not expected to reach the bound.
        $co = \array_values(\array_filter(Findings::ok($rows, ['mode' => 'coroutine']), static fn (Row $r): bool => $r->param('hooks') !== 'off'));
        if ($co === []) {
            return [Check::unknown($claim, 'no coroutine row ran')];
        }
        $failing = [];
        $parts = [];
        foreach ($co as $row) {
            $bound = (float) $row->number('bound_rps');
            $timeouts = (int) ($row->metric('errors')['timeout'] ?? 0);
            if ($row->number('rps') < $bound * (1 - self::WITHIN) || $timeouts > 0) {
                $failing[] = $row->label();
            }
            $parts[] = \sprintf('%s: %s of %s req/s (%d %%), %d timeouts', $row->label(), Format::rate($row->number('rps')), Format::rate($bound), $bound > 0 ? (int) \round($row->number('rps') / $bound * 100) : 0, $timeouts);
        }
        return [new Check($claim, $failing === [], \implode('; ', $parts), $failing)];
    }
}
