<?php

declare(strict_types=1);

namespace Weft\Bench\Report;

use Weft\Bench\Row;

/**
 * The advice of `bin/weft bench app`, computed from the rows of the run and nothing else: the mode and
 * worker count that served the most requests/s with p99 under the target and no errors, where that
 * configuration saturates (the knee), the memory it used, and why (how much of a request is waiting,
 * what the other modes needed, whether the app blocks in coroutine mode). Pure: rows in, advice out.
 */
final class Recommendation
{
    /** Rows within this share of the best requests/s are a tie (noise); the lighter one wins. */
    public const TIE = 0.05;
    /** The knee: the first concurrency at which a configuration reached this share of its peak. */
    public const KNEE = 0.90;
    /** A configuration whose last concurrency step still added this share of requests/s had not saturated. */
    public const RISING = 0.05;
    /** A row with a larger share of failed requests is not a candidate. */
    public const MAX_ERROR_SHARE = 0.001;
    /** A server at this share of its cores is CPU-bound... */
    private const SATURATED = 0.85;
    /** ...and one below this share left CPU idle. */
    private const IDLE = 0.80;
    /** Below this share of waiting, a request is mostly CPU. */
    private const CPU_BOUND_WAIT = 0.30;
    /** Below this much waiting per request (ms), the wait is the loopback round trip and the client, not the app. */
    private const TRANSPORT_MS = 0.5;
    /** A coroutine worker with at most this many requests in progress per worker was running them one at a time. */
    private const ONE_AT_A_TIME = 1.5;

    /**
     * @param array<string, mixed> $data
     * @param list<string> $reasons
     */
    private function __construct(public readonly array $data, public readonly string $headline, public readonly array $reasons)
    {
    }

    /** Whether a row can be recommended: it ran, met the p99 target and (almost) nothing failed. */
    public static function eligible(Row $row, float $p99Target): bool
    {
        $rps = $row->number('rps');
        $p99 = $row->number('p99_ms');
        if (!$row->isOk() || $rps === null || $rps <= 0 || $p99 === null || $p99 > $p99Target) {
            return false;
        }
        $requests = (float) ($row->number('requests') ?? 0);
        return $row->errorTotal() <= self::MAX_ERROR_SHARE * \max(1.0, $requests + $row->errorTotal());
    }

    /**
     * @param list<Row> $rows
     * @param array<string, mixed> $request what was sent (AppTarget::toArray()), carried into the JSON so
     *        a CI job can tell which requests the advice is for
     */
    public static function compute(array $rows, float $p99Target, int $serverCores, string $app, array $request = [], ?int $memoryLimit = null): self
    {
        $ok = Findings::ok($rows);
        $eligible = \array_values(\array_filter($ok, static fn (Row $r): bool => self::eligible($r, $p99Target)));
        $target = Format::number($p99Target, 0) . ' ms';
        $data = [
            'app' => $app,
            'request' => $request === [] ? null : $request,
            'p99_target_ms' => $p99Target,
            'rows_measured' => \count($ok),
            'recommended' => null,
            'knee_concurrency' => null,
            'max_concurrency_under_target' => null,
            'first_concurrency_over_target' => null,
            'alone' => null,
            'cpu_bound' => false,
            'blocking' => ['suspected' => false, 'evidence' => [], 'calls' => []],
            'app_instances' => null,
            'modes' => [],
        ];
        $reasons = [];
        if ($ok === []) {
            // Say why: a user whose app does not load must read it here, not dig through the table.
            // The failures first (up to three different ones); with none, why the rows were skipped.
            $why = self::causes($rows, Row::FAILED, 3) ?: self::causes($rows, Row::SKIPPED, 1);
            $headline = 'No row ran, so there is nothing to recommend.';
            return new self($data + ['headline' => $headline, 'reasons' => $why], $headline, $why);
        }

        $best = self::pick($eligible);
        $alone = self::alone($ok, $best);
        $data['alone'] = $alone;
        $blocking = self::blocking($ok, $serverCores);
        $data['blocking'] = $blocking;

        $clean = \array_values(\array_filter($ok, static fn (Row $r): bool => self::errorShare($r) <= self::MAX_ERROR_SHARE));
        if ($best === null && $clean === []) {
            // Every row failed requests: latency is beside the point until the app answers.
            $least = $ok;
            \usort($least, static fn (Row $a, Row $b): int => self::errorShare($a) <=> self::errorShare($b));
            $headline = \sprintf('No configuration served without errors: even the best, %s, failed %s %% of its requests (%s).',
                $least[0]->label(), Format::number(100 * self::errorShare($least[0])), self::errorList($least[0]));
            $reasons[] = 'Fix the failures before tuning: a configuration is recommended only when at most '
                . Format::number(100 * self::MAX_ERROR_SHARE) . ' % of its requests fail (an answer outside 2xx/3xx, a reset or a timeout).';
            foreach (self::logged($ok) as $line) {
                $reasons[] = $line;
            }
        } elseif ($best === null) {
            $lowest = self::lowest($clean, 'p99_ms');
            $headline = \sprintf('No configuration kept p99 under %s without errors%s.', $target,
                $lowest === null ? '' : \sprintf('; the lowest p99 without errors was %s ms (%s, %s req/s)', Format::ms($lowest->number('p99_ms')), $lowest->label(), Format::rate($lowest->number('rps'))));
            $reasons[] = 'Raise --p99, lower the concurrency your clients send (a proxy in front with a connection limit), or make the request cheaper; the table below shows where latency went.';
        } else {
            $config = self::config($ok, $best);
            $peak = \max(\array_map(static fn (Row $r): float => (float) $r->number('rps'), $config));
            $knee = null;
            foreach ($config as $row) {
                if ($row->number('rps') >= self::KNEE * $peak) {
                    $knee = (int) $row->param('concurrency');
                    break;
                }
            }
            // No knee inside the measured range: one level only, or requests/s still rising at the last one.
            $last = $config[\count($config) - 1];
            $before = \count($config) >= 2 ? $config[\count($config) - 2] : null;
            // ... unless the server's CPU was already saturated there: that is where it saturates.
            $rising = $before !== null && $before->number('rps') > 0 && $last->number('rps') >= $peak
                && $last->number('rps') / $before->number('rps') - 1 >= self::RISING
                && ($last->number('cpu_pct') ?? 0.0) < self::SATURATED * 100 * $serverCores;
            if (\count($config) === 1 || $rising) {
                $knee = null;
            }
            $under = \array_values(\array_filter($config, static fn (Row $r): bool => self::eligible($r, $p99Target)));
            $maxUnder = \max(\array_map(static fn (Row $r): int => (int) $r->param('concurrency'), $under));
            $over = null;
            foreach ($config as $row) {
                if ((int) $row->param('concurrency') > $maxUnder && !self::eligible($row, $p99Target)) {
                    $over = $row;
                    break;
                }
            }
            $memory = $best->number('pss_bytes') ?? $best->number('rss_bytes');
            $data['recommended'] = [
                'mode' => $best->param('mode'),
                'loop' => $best->param('loop'),
                'workers' => (int) $best->param('workers'),
                'concurrency' => (int) $best->param('concurrency'),
                'rps' => $best->number('rps'),
                'p99_ms' => $best->number('p99_ms'),
                'pss_bytes' => $best->number('pss_bytes'),
                'rss_bytes' => $best->number('rss_bytes'),
                'cpu_pct' => $best->number('cpu_pct'),
                'cpu_us_per_req' => $best->number('cpu_us_per_req'),
            ];
            $data['knee_concurrency'] = $knee;
            $data['max_concurrency_under_target'] = $maxUnder;
            $data['first_concurrency_over_target'] = $over === null ? null : (int) $over->param('concurrency');

            $workers = (int) $best->param('workers');
            $headline = \sprintf(
                '%s mode%s, %d worker%s: %s req/s with p99 %s ms (target %s) at concurrency %d, %s of memory.',
                self::modeName((string) $best->param('mode')), \count(Findings::values($ok, 'loop')) > 1 && $best->param('loop') !== null ? ' (' . $best->param('loop') . ' loop)' : '',
                $workers, $workers === 1 ? '' : 's', Format::rate($best->number('rps')),
                Format::ms($best->number('p99_ms')), $target, (int) $best->param('concurrency'), $memory === null ? 'unknown amount' : Format::bytes($memory),
            );
            $lowestC = (int) $config[0]->param('concurrency');
            $saturation = match (true) {
                \count($config) === 1 => \sprintf('Only concurrency %d was measured for it, so where it saturates is not known', $lowestC),
                $rising => \sprintf('It had not saturated at concurrency %d, the highest level measured for it (requests/s still rose %s from concurrency %d); more concurrency may serve more, at a higher p99',
                    (int) $last->param('concurrency'), Format::number(100 * ($last->number('rps') / $before->number('rps') - 1), 0) . ' %', (int) $before->param('concurrency')),
                // Its climb started high (a configuration added for more workers): the knee is at or below its first level.
                $knee === $lowestC && $lowestC > 1 => \sprintf('It saturates at or below concurrency %d, the lowest level measured for it', $knee),
                default => \sprintf('It saturates at about concurrency %d (the first level where it reached %d %% of its peak requests/s)', $knee, (int) (self::KNEE * 100)),
            };
            $saturation .= match (true) {
                $over === null => \sprintf('; p99 stayed under %s up to concurrency %d, the highest measured for it.', $target, $maxUnder),
                // Past the range it failed requests (timeouts, resets, errors), whatever its p99 was.
                self::errorShare($over) > self::MAX_ERROR_SHARE => \sprintf('; it stayed under %s without errors up to concurrency %d; at %d, %s %% of its requests failed (%s).',
                    $target, $maxUnder, (int) $over->param('concurrency'), Format::number(100 * self::errorShare($over)), self::errorList($over)),
                default => \sprintf('; p99 stayed under %s up to concurrency %d and was %s ms at %d.', $target, $maxUnder, Format::ms($over->number('p99_ms')), (int) $over->param('concurrency')),
            };
            $reasons[] = $saturation;
            if ($memory !== null) {
                $reasons[] = \sprintf('Memory: %s PSS for all its processes at that load (%s RSS, which counts shared pages once per process).', Format::bytes($best->number('pss_bytes')), Format::bytes($best->number('rss_bytes')));
            }
        }

        if ($alone !== null) {
            $wait = $alone['wait_share'];
            $line = \sprintf('A request alone (concurrency 1, %s) takes %s ms, of which %s µs is server CPU: ', $alone['label'], Format::ms($alone['latency_ms']), Format::number($alone['cpu_us']));
            $waitedMs = $alone['latency_ms'] - $alone['cpu_us'] / 1000;
            if ($waitedMs < self::TRANSPORT_MS) {
                // A fraction of a millisecond is what the loopback round trip and the load generator take
                // by themselves: this run cannot tell the app's own waiting from them.
                $line .= \sprintf('the other %s ms is the round trip to the load generator plus whatever the app waits for; at under %s ms this run cannot tell the two apart.', Format::ms(\max(0.0, $waitedMs)), Format::number(self::TRANSPORT_MS));
            } elseif ($wait !== null && $wait >= 0.5) {
                $line .= \sprintf('the app waits about %d %% of each request (database, upstream, sleep), so serving other requests during the wait is what pays', (int) \round($wait * 100))
                    . ($blocking['suspected'] ? ', which coroutine mode can do only once the wait suspends the request instead of blocking the worker (below).' : ', and that is what coroutine mode does.');
            } elseif ($wait !== null && $wait < self::CPU_BOUND_WAIT) {
                $line .= \sprintf('the app is CPU-bound (it waits only about %d %% of a request).', (int) \round($wait * 100));
            } else {
                $line .= \sprintf('the app waits about %d %% of each request.', (int) \round(($wait ?? 0) * 100));
            }
            $reasons[] = $line;
        }
        $saturated = $best !== null && ($best->number('cpu_pct') ?? 0) >= self::SATURATED * 100 * $serverCores;
        $data['cpu_bound'] = ($alone !== null && $alone['wait_share'] !== null && $alone['wait_share'] < self::CPU_BOUND_WAIT) || $saturated;
        if ($data['cpu_bound'] && $best !== null) {
            $us = $best->number('cpu_us_per_req');
            $reasons[] = \sprintf(
                'The server\'s CPU sets the pace (%s %% of its %d core(s) at the recommended row%s): more workers than cores, or more coroutines, cannot add throughput; a cheaper request or more cores can.',
                Format::pct($best->number('cpu_pct')), $serverCores, $us === null ? '' : \sprintf('; %s µs of CPU per request, so about %s req/s per core at most', Format::number($us), Format::rate(1e6 / \max($us, 0.001))),
            );
        }

        // Only where the throughput stopped rising inside the measured range did something set a pace.
        if ($best !== null && !$data['cpu_bound'] && !$blocking['suspected'] && $data['knee_concurrency'] !== null) {
            $config = self::config($ok, $best);
            $peak = Findings::best($config);
            if ($peak !== null && ($peak->number('cpu_pct') ?? 100.0) < self::IDLE * 100 * $serverCores && \count($config) > 1) {
                $reasons[] = \sprintf(
                    'Its throughput peaked at %s req/s with the server\'s CPU at %s %% of %d core(s): something outside the server set the pace there (the database or upstream the app waits for, or the load generator), so more workers or concurrency will not raise it.',
                    Format::rate($peak->number('rps')), Format::pct($peak->number('cpu_pct')), $serverCores,
                );
            }
        }
        foreach (Findings::values($ok, 'mode') as $mode) {
            $data['modes'][$mode] = self::mode($mode, $ok, $eligible, $best);
            if ($best !== null && $mode !== $best->param('mode')) {
                $reasons[] = self::modeSentence($mode, $data['modes'][$mode], $best, $target);
            }
        }

        if ($best !== null || $clean !== []) {
            // Rows that failed requests are left out of the advice: say what the server logged for them.
            foreach (self::logged($ok) as $line) {
                $reasons[] = $line;
            }
        }
        $pool = self::pool($ok, $best, $blocking['suspected'], $memoryLimit, $alone['latency_ms'] ?? null);
        if ($pool !== null) {
            $data['app_instances'] = $pool['data'];
            $reasons[] = $pool['line'];
        }
        if ($blocking['suspected']) {
            $evidence = $blocking['evidence'];
            $reasons[] = 'Coroutine mode blocks: ' . \implode(' ', [\array_shift($evidence), ...\array_map('ucfirst', $evidence)])
                . ' A call that blocks the worker holds every other request of that worker. Use Weft\'s own clients (Weft\Client\Mysql, Redis, Postgres, Http) or load the native extension, whose hooks make PDO, mysqli, phpredis, curl, file_get_contents and sleep/usleep suspend only the request; until then, sync mode (or coroutine mode with as many workers) is the honest configuration.';
        } elseif (\count(Findings::values(Findings::ok($ok, ['mode' => 'coroutine']), 'concurrency')) === 1) {
            // One level says nothing about whether more concurrency would have raised the throughput.
            $reasons[] = 'Whether the app blocks in coroutine mode cannot be told from this run: coroutine mode ran at one concurrency level only (and its server logged no "blocked" line).';
        } elseif (Findings::ok($ok, ['mode' => 'coroutine']) !== []) {
            $reasons[] = 'No sign that the app blocks in coroutine mode (throughput rose with concurrency or the CPU was busy, and no "blocked" line in the server logs).';
        }
        return new self($data + ['headline' => $headline, 'reasons' => $reasons], $headline, $reasons);
    }

    /**
     * The framework instances per coroutine worker (`--app-instances`, Weft's Laravel and Symfony
     * bridges): what a pool cost in memory at the recommended load and how large one fits under PHP's
     * memory_limit, when the run gave the coroutine rows a pool; a hint to give them one when coroutine
     * mode ran one request at a time per worker without.
     *
     * @param list<Row> $ok
     * @param ?float $aloneMs the time a request takes alone: how long it holds an instance
     * @return ?array{data: array<string, mixed>, line: string}
     */
    public static function pool(array $ok, ?Row $best, bool $oneAtATime, ?int $memoryLimit, ?float $aloneMs = null): ?array
    {
        $coroutine = Findings::ok($ok, ['mode' => 'coroutine']);
        $given = (int) \max([0, ...\array_map(static fn (Row $r): int => (int) ($r->param('instances') ?? 0), $coroutine)]);
        if ($given <= 1) {
            return $oneAtATime && $coroutine !== [] ? [
                'data' => ['given' => $given === 0 ? null : 1, 'suggested' => null],
                'line' => 'If the app runs through Weft\'s Laravel or Symfony bridge, each worker holds one framework instance unless `--app-instances N` gives it more, and one instance serves one request at a time: measure again with `bench app ... --app-instances N` (N about the concurrency each worker serves), which also reports what an instance costs in memory.',
            ] : null;
        }
        $measured = \array_values(\array_filter($coroutine, static fn (Row $r): bool => $r->number('worker_rss_start') !== null && $r->number('worker_rss_bytes') !== null));
        if ($measured === []) {
            return null;
        }
        // A worker boots an instance when a request is let into the framework while all are busy, so the
        // instances booted are what the workers report (without a report: up to min(pool, connections per
        // worker), as requests that wait each hold one). The memory of an instance is read where the most
        // were in use; the pool the advice suggests is what the recommended row's connections per worker need.
        $inUse = static fn (Row $r): int => (int) ($r->number('instances_booted')
            ?? \min($given, (int) \ceil((int) $r->param('concurrency') / \max(1, (int) $r->param('workers')))));
        \usort($measured, static fn (Row $a, Row $b): int => [$inUse($b), $b->number('worker_rss_bytes')] <=> [$inUse($a), $a->number('worker_rss_bytes')]);
        $row = $measured[0];
        $target = $best !== null && $best->param('mode') === 'coroutine' ? $best : $row;
        $targetWorkers = \max(1, (int) $target->param('workers'));
        $perWorker = (int) \ceil((int) $target->param('concurrency') / $targetWorkers);
        if ($aloneMs !== null && $aloneMs > 0 && $target->number('rps') !== null) {
            // Little's law: the requests inside the framework at once are the throughput times the time
            // each holds an instance (about what it takes alone); the others wait for the CPU, not an instance.
            $perWorker = \max(1, \min($perWorker, (int) \ceil($target->number('rps') / $targetWorkers * $aloneMs / 1000)));
        }
        $workers = \max(1, (int) $row->param('workers'));
        $start = (int) $row->number('worker_rss_start');
        $grown = \max(0, (int) $row->number('worker_rss_bytes') - $start);
        $each = $inUse($row) > 1 ? (int) \round($grown / ($inUse($row) - 1)) : null;
        $fits = $memoryLimit !== null && $memoryLimit > 0 && $each !== null && $each > 0 ? \max(1, \intdiv(\max(0, $memoryLimit - $start), $each)) : null;
        $suggested = \max(1, $fits === null ? $perWorker : \min($perWorker, $fits));
        $line = \sprintf(
            'Framework instances: with `--app-instances %d`, a coroutine worker went from %s (one instance, at its start) to %s at %s (concurrency %d over %d worker%s: %d instance%s booted)',
            $given, Format::bytes($start), Format::bytes($start + $grown), $row->label('mode'), (int) $row->param('concurrency'), $workers, $workers === 1 ? '' : 's', $inUse($row), $inUse($row) === 1 ? '' : 's',
        );
        if ($each !== null) {
            $line .= \sprintf(', at most %s an instance (if all booted)', Format::bytes($each));
        }
        $load = $target === $best ? 'at the recommended load' : 'at that load';
        $line .= match (true) {
            $fits !== null => \sprintf('. PHP\'s memory_limit (%s, each worker) leaves room for about %d; `--app-instances %d` covers the %d request(s) each worker has in the framework at once %s%s.',
                Format::bytes($memoryLimit), $fits, $suggested, $perWorker, $load, $suggested < $perWorker ? ' as far as the memory allows' : ''),
            $memoryLimit === -1 => \sprintf('. PHP\'s memory_limit is off (-1): only the machine\'s memory bounds the pool; `--app-instances %d` covers the %d request(s) each worker has in the framework at once %s.', $suggested, $perWorker, $load),
            default => \sprintf('; `--app-instances %d` covers the %d request(s) each worker has in the framework at once %s.', $suggested, $perWorker, $load),
        };
        return [
            'data' => [
                'given' => $given, 'label' => $row->label(), 'worker_rss_start' => $start, 'worker_rss_peak' => $start + $grown,
                'instances_in_use' => $inUse($row), 'per_instance_bytes' => $each, 'memory_limit' => $memoryLimit, 'fit_by_memory' => $fits, 'suggested' => $suggested,
            ],
            'line' => $line,
        ];
    }

    /** PHP's shorthand for a size (memory_limit: 128M, 1G, 512K, -1), in bytes; null when it is not one. */
    public static function bytes(string $value): ?int
    {
        if (!\preg_match('/^(-?\d+)\s*([KMG]?)$/i', \trim($value), $m)) {
            return null;
        }
        return (int) $m[1] * match (\strtoupper($m[2])) {
            'K' => 1024,
            'M' => 1024 ** 2,
            'G' => 1024 ** 3,
            default => 1,
        };
    }

    /**
     * @param list<Row> $rows
     * @return list<string> "label: reason" of the first rows with this status, one per different reason
     */
    private static function causes(array $rows, string $status, int $max): array
    {
        $why = [];
        foreach ($rows as $row) {
            if ($row->status === $status && $row->reason !== null && !isset($why[$row->reason]) && \count($why) < $max) {
                $why[$row->reason] = $row->label() . ': ' . ($status === Row::SKIPPED ? 'skipped: ' : '') . $row->reason;
            }
        }
        return \array_values($why);
    }

    private static function modeName(string $mode): string
    {
        return $mode === 'fpm' ? 'FPM' : \ucfirst($mode);
    }

    /** The share of a row's requests that failed (error answers, resets, timeouts). */
    public static function errorShare(Row $row): float
    {
        $errors = $row->errorTotal();
        return $errors / \max(1.0, (float) ($row->number('requests') ?? 0) + $errors);
    }

    private static function errorList(Row $row): string
    {
        $parts = [];
        foreach ((array) ($row->metric('errors') ?? []) as $kind => $count) {
            if (\is_int($count) && $count > 0) {
                $parts[] = (match ($kind) { 'non2xx' => 'answers outside 2xx/3xx', 'no_answer' => 'connections never answered', default => $kind }) . ' ' . Format::number($count, 0);
            }
        }
        return $parts === [] ? 'errors' : \implode(', ', $parts);
    }

    /**
     * What the servers logged about failed requests and replaced workers, once per kind, from the rows'
     * `log` figures (AppScenario::logProblems()).
     *
     * @param list<Row> $ok
     * @return list<string>
     */
    private static function logged(array $ok): array
    {
        $errors = $exits = 0;
        $firstError = $firstExit = null;
        $errorRows = $exitRows = [];
        foreach ($ok as $row) {
            $log = $row->metric('log');
            if (!\is_array($log)) {
                continue;
            }
            if (($log['errors'] ?? 0) > 0) {
                $errors += $log['errors'];
                $firstError ??= $log['first_error'];
                $errorRows[] = $row->label();
            }
            if (($log['worker_exits'] ?? 0) > 0) {
                $exits += $log['worker_exits'];
                $firstExit ??= $log['first_exit'];
                $exitRows[] = $row->label();
            }
        }
        $lines = [];
        if ($errors > 0) {
            $lines[] = \sprintf('The server logged %s error line(s) (each uncaught exception among them is a failed request) in %d row(s) (%s); the first: %s. The logs folder next to the report has every server\'s log.',
                Format::number($errors, 0), \count($errorRows), self::some($errorRows), $firstError);
        }
        if ($exits > 0) {
            $lines[] = \sprintf('Workers ended and were replaced %s time(s) in %d row(s) (%s), the first %s: each takes the requests it held with it (in sync mode, exit() or die() in a request ends the worker).',
                Format::number($exits, 0), \count($exitRows), self::some($exitRows), $firstExit);
        }
        return $lines;
    }

    /** @param list<string> $labels */
    private static function some(array $labels): string
    {
        return \count($labels) <= 3 ? \implode('; ', $labels) : \implode('; ', \array_slice($labels, 0, 3)) . '; …';
    }

    /**
     * The best eligible row: the most requests/s, a tie within TIE going to the smaller memory, then
     * the fewer workers.
     *
     * @param list<Row> $eligible
     */
    private static function pick(array $eligible): ?Row
    {
        if ($eligible === []) {
            return null;
        }
        $max = \max(\array_map(static fn (Row $r): float => (float) $r->number('rps'), $eligible));
        $ties = \array_values(\array_filter($eligible, static fn (Row $r): bool => $r->number('rps') >= (1 - self::TIE) * $max));
        \usort($ties, static fn (Row $a, Row $b): int => [self::memory($a), (int) $a->param('workers'), -$a->number('rps')] <=> [self::memory($b), (int) $b->param('workers'), -$b->number('rps')]);
        return $ties[0];
    }

    private static function memory(Row $row): float
    {
        return $row->number('pss_bytes') ?? $row->number('rss_bytes') ?? \INF;
    }

    /** @param list<Row> $rows @return list<Row> the rows of the same mode, loop and workers, by concurrency */
    private static function config(array $rows, Row $like): array
    {
        $config = \array_values(\array_filter($rows, static fn (Row $r): bool => $r->param('mode') === $like->param('mode')
            && $r->param('loop') === $like->param('loop') && $r->param('workers') === $like->param('workers')));
        \usort($config, static fn (Row $a, Row $b): int => $a->param('concurrency') <=> $b->param('concurrency'));
        return $config;
    }

    /** @param list<Row> $rows */
    private static function lowest(array $rows, string $metric): ?Row
    {
        return Findings::worst(\array_values(\array_filter($rows, static fn (Row $r): bool => $r->number($metric) !== null)), $metric);
    }

    /**
     * A request alone: a concurrency-1 row (of the recommended mode when there is one), its latency and
     * server CPU per request. The difference is the time the request waited.
     *
     * @param list<Row> $ok
     * @return ?array{label: string, latency_ms: float, cpu_us: float, wait_share: ?float}
     */
    private static function alone(array $ok, ?Row $best): ?array
    {
        $single = \array_values(\array_filter($ok, static fn (Row $r): bool => (int) $r->param('concurrency') === 1
            && $r->number('rps') > 0 && $r->number('cpu_us_per_req') !== null && $r->param('mode') !== 'fpm'));
        if ($single === []) {
            return null;
        }
        // The recommended mode and loop first, then the fewest workers.
        $rank = static fn (Row $r): array => [$r->param('mode') !== ($best?->param('mode') ?? 'coroutine'), $best !== null && $r->param('loop') !== $best->param('loop'), $r->param('workers')];
        \usort($single, static fn (Row $a, Row $b): int => $rank($a) <=> $rank($b));
        $row = $single[0];
        // The mean (a closed loop of one connection completes 1 / mean latency per second), to match the
        // CPU time per request, which is a mean too.
        $latencyMs = 1000 / (float) $row->number('rps');
        $cpuUs = (float) $row->number('cpu_us_per_req');
        return [
            'label' => $row->label(),
            'latency_ms' => $latencyMs,
            'cpu_us' => $cpuUs,
            'wait_share' => $latencyMs > 0 ? \round(\max(0.0, 1 - $cpuUs / ($latencyMs * 1000)), 3) : null,
        ];
    }

    /**
     * Whether coroutine mode ran requests one at a time per worker. Evidence: the blocking-call detector's
     * "blocked" lines in the server log; or, with the CPU idle and many more connections than workers,
     * the configuration's best requests/s x the time a request takes alone (Little's law: the requests in
     * progress at once) no higher than its workers. The best, not the last row: when a database or an
     * upstream saturates, throughput also stops rising with the CPU idle, but not before the worker ran
     * several requests at once.
     *
     * @param list<Row> $ok
     * @return array{suspected: bool, evidence: list<string>, calls: array<string, int>}
     */
    public static function blocking(array $ok, int $serverCores): array
    {
        $evidence = [];
        $calls = [];
        $coroutine = Findings::ok($ok, ['mode' => 'coroutine']);
        foreach ($coroutine as $row) {
            foreach ((array) ($row->metric('blocked') ?? []) as $call => $count) {
                $calls[$call] = ($calls[$call] ?? 0) + (int) $count;
            }
        }
        if ($calls !== []) {
            \arsort($calls);
            $evidence[] = \sprintf('the server logged %d "blocked" line(s) in coroutine mode (%s).', \array_sum($calls),
                \implode(', ', \array_map(static fn (string $c, int $n): string => "$c ×$n", \array_keys($calls), $calls)));
        }
        foreach (Findings::groupBy($coroutine, ['loop', 'workers']) as $config) {
            \usort($config, static fn (Row $a, Row $b): int => $a->param('concurrency') <=> $b->param('concurrency'));
            $workers = (int) $config[0]->param('workers');
            $low = $config[0];
            $high = $config[\count($config) - 1];
            $c = (int) $high->param('concurrency');
            $idle = ($high->number('cpu_pct') ?? 100.0) < self::IDLE * 100 * $serverCores;
            // The time a request takes when it never waits behind another: from a row with no more
            // connections than workers (closed loop: each connection completes 1 / its latency per second).
            if (\count($config) < 2 || !$idle || $c < 4 * $workers || (int) $low->param('concurrency') > $workers || $low->number('rps') <= 0) {
                continue;
            }
            $serviceS = (int) $low->param('concurrency') / $low->number('rps');
            // A request that is mostly CPU runs about one at a time per worker whether or not it blocks (a
            // large response against a slow reader does the same): only a request that waits most of its
            // time alone and still never overlaps another is blocking.
            $cpuS = ($low->number('cpu_us_per_req') ?? 0.0) / 1e6;
            if ($cpuS >= 0.5 * $serviceS) {
                continue;
            }
            $peak = Findings::best($config);
            // Little's law: the requests in progress at once at the configuration's best.
            $inFlight = $peak->number('rps') * $serviceS;
            if ($inFlight <= self::ONE_AT_A_TIME * $workers) {
                $evidence[] = \sprintf(
                    'with %d worker%s it never served more than %s req/s (up to concurrency %d, the CPU at %s %%), while a request alone takes %s ms on average: only about %.1f request(s) were in progress at a time, so each worker ran one request at a time, as in sync mode.',
                    $workers, $workers === 1 ? '' : 's', Format::rate($peak->number('rps')), $c, Format::pct($high->number('cpu_pct')), Format::ms($serviceS * 1000), $inFlight,
                );
            }
        }
        return ['suspected' => $evidence !== [], 'evidence' => $evidence, 'calls' => $calls];
    }

    /**
     * @param list<Row> $ok
     * @param list<Row> $eligible
     * @return array<string, mixed>
     */
    private static function mode(string $mode, array $ok, array $eligible, ?Row $best): array
    {
        $rows = Findings::ok($ok, ['mode' => $mode]);
        $good = Findings::ok($eligible, ['mode' => $mode]);
        $bestHere = self::pick($good);
        $worst = Findings::best(\array_values(\array_filter($rows, static fn (Row $r): bool => $r->number('p99_ms') !== null)), 'p99_ms');
        $needed = null;
        if ($best !== null) {
            foreach ($good as $row) {
                if ($row->number('rps') >= (1 - self::TIE) * $best->number('rps') && ($needed === null || (int) $row->param('workers') < $needed)) {
                    $needed = (int) $row->param('workers');
                }
            }
        }
        return [
            'best_under_target' => $bestHere === null ? null : [
                'workers' => (int) $bestHere->param('workers'), 'concurrency' => (int) $bestHere->param('concurrency'),
                'rps' => $bestHere->number('rps'), 'p99_ms' => $bestHere->number('p99_ms'), 'pss_bytes' => $bestHere->number('pss_bytes'),
            ],
            'workers_to_match' => $needed,
            'workers_tried' => Findings::values($rows, 'workers'),
            'best_any' => ($top = Findings::best($rows)) === null ? null : ['label' => $top->label(), 'rps' => $top->number('rps'), 'p99_ms' => $top->number('p99_ms')],
            'worst_p99' => $worst === null ? null : ['label' => $worst->label(), 'p99_ms' => $worst->number('p99_ms'), 'max_ms' => $worst->number('max_ms')],
        ];
    }

    /** @param array<string, mixed> $m */
    private static function modeSentence(string $mode, array $m, Row $best, string $target): string
    {
        $under = $m['best_under_target'];
        if ($under === null) {
            $text = \sprintf('%s mode never kept p99 under %s without errors', self::modeName($mode), $target);
            if ($m['best_any'] !== null) {
                $text .= \sprintf(' (its most requests/s: %s at p99 %s ms, %s)', Format::rate($m['best_any']['rps']), Format::ms($m['best_any']['p99_ms']), $m['best_any']['label']);
            }
        } else {
            $text = \sprintf('%s mode at best: %s req/s under target with %d worker%s (%s of the recommendation; %s PSS)', self::modeName($mode), Format::rate($under['rps']),
                $under['workers'], $under['workers'] === 1 ? '' : 's', Format::times($under['rps'] / \max(0.001, (float) $best->number('rps'))), Format::bytes($under['pss_bytes']));
            $text .= $m['workers_to_match'] !== null
                ? \sprintf('; it needs %d worker%s to come within %d %% of it', $m['workers_to_match'], $m['workers_to_match'] === 1 ? '' : 's', (int) (self::TIE * 100))
                : \sprintf('; none of the worker counts tried (%s) came within %d %% of it', \implode(', ', $m['workers_tried']), (int) (self::TIE * 100));
        }
        if ($m['worst_p99'] !== null && $m['worst_p99']['p99_ms'] > 0) {
            $text .= \sprintf('; its worst p99 was %s ms (%s)', Format::ms($m['worst_p99']['p99_ms']), $m['worst_p99']['label']);
        }
        return $text . '.';
    }

    /** @return array<string, mixed> */
    public function toArray(): array
    {
        return $this->data;
    }

    /** The report's section, placed at the top. */
    public function markdown(bool $final): string
    {
        $out = '## Recommendation for ' . \basename((string) $this->data['app']) . "\n\n";
        if (!$final) {
            $out .= "_Computed from the rows measured so far; the run is not complete._\n\n";
        }
        $out .= '**' . $this->headline . "**\n\n";
        foreach ($this->reasons as $reason) {
            $out .= "- $reason\n";
        }
        return $out . "\nComputed from the rows of this run (table below): the best requests/s among the candidates, rows with p99 ≤ "
            . Format::number((float) $this->data['p99_target_ms'], 0) . ' ms and at most ' . Format::number(100 * self::MAX_ERROR_SHARE) . " % of requests failed, ties within 5 % going to the smaller memory.\n\n";
    }

    /** Plain text for the terminal. */
    public function text(): string
    {
        $out = 'Recommendation for ' . $this->data['app'] . ":\n  " . $this->headline . "\n";
        foreach ($this->reasons as $reason) {
            $out .= '  - ' . $reason . "\n";
        }
        return $out;
    }
}
