<?php

declare(strict_types=1);

namespace Weft\Bench\Scenario;

use Weft\Bench\Adaptive;
use Weft\Bench\Environment;
use Weft\Bench\Load\Measurement;
use Weft\Bench\Load\Probe;
use Weft\Bench\Load\Wrk;
use Weft\Bench\Load\WrkParser;
use Weft\Bench\Process\ProcessTree;
use Weft\Bench\Process\Service;
use Weft\Bench\Report\Chart;
use Weft\Bench\Report\Check;
use Weft\Bench\Report\Column;
use Weft\Bench\Report\Findings;
use Weft\Bench\Report\Format;
use Weft\Bench\Row;

/**
 * Framework applications under Weft's bridges: the hello route resident (kernel booted once per worker)
 * against fpm mode (booted on every request), and, since the bridges hold a pool of framework instances
 * per worker (`serve --app-instances N`, issue 22), routes that wait on MariaDB (`/sleep`: 50 ms, `/sql3`:
 * three queries) in coroutine mode with a pool against sync mode, and the memory each instance costs.
 * The apps are the bridge tests' fixtures (tests/Fixtures), installed by scripts/fixtures.sh.
 *
 * The `/sql3` verdict (coroutine at least as fast as sync with its best worker count) is made in two
 * steps, because taking the best of several noisy sync rows against the best of the coroutine rows
 * rewards whichever mode had the luckiest row (the winner's curse): the selection rows (each worker count,
 * each pool size) only choose each mode's best configuration; next() then measures those two side by
 * side, both servers up, in alternating rounds of 1 s ("paired" rows), and the verdict is the median of
 * the rounds' ratios (each round's coroutine rate over the sync rate of the round next to it), which
 * a drift of the machine's load moves for both sides alike.
 */
final class FrameworkScenario extends HttpScenario implements Adaptive
{
    public const APPS = ['symfony' => 'symfony-app', 'laravel' => 'laravel-app'];
    public const ROUTES = ['hello' => '/', 'sleep' => '/sleep', 'sql3' => '/sql3'];

    /**
     * The pool of the hello and sleep rows: as many instances as the sleep rows have connections, so
     * that no request waits for an instance while another only waits on the database.
     */
    public const POOL = 50;
    /**
     * The pool of the sql3 rows (the full run also tries 4, 8 and 64). A request holds its instance only
     * for three short queries, so one worker's core is the bound long before many requests wait on
     * MariaDB at once: measured on 2026-11-26, 16 was the best or within noise of it for both apps at
     * c=100 and c=300, while 64 cost Laravel 30 % more CPU per request (more requests in flight, each
     * switch between them swaps its instance's state) and was not flat for either app. On 2026-11-27,
     * with instances booted on demand, 4 served Laravel's c=100 best (fewer requests in flight, fewer
     * switches). Every instance is also one more database connection (MariaDB allows 151 by default,
     * shared by everything).
     */
    public const SQL3_POOL = 16;
    /** What `/sleep` waits on MariaDB (SELECT SLEEP(0.05)). */
    public const WAIT = 0.05;
    /** The concurrency of the sleep rows (issue 22: c=50). */
    private const SLEEP_CONCURRENCY = 50;

    /** Issue 22's targets. */
    private const SLEEP_TIMES_SYNC = 10.0;
    /** A worker using this share of its core is at the CPU limit. */
    private const SATURATED = 0.90;
    private const SQL3_NOISE = 0.05;
    private const SQL3_FLAT = 0.85;
    private const HELLO_POOL_KEEPS = 0.95;
    /** The `phase` parameter of the rows that measure the chosen sync and coroutine configurations side by side. */
    public const PAIRED = 'paired';
    /** Rounds of a paired measurement at least: a median of two is a mean. */
    private const PAIRED_MIN_ROUNDS = 3;

    private bool $seeded = false;
    /** @var list<list<Row>> rows measured together, in alternating rounds (group()) */
    private array $groups = [];

    public function name(): string
    {
        return 'framework';
    }

    public function title(): string
    {
        return 'framework — Symfony and Laravel: resident against fpm, and a pool of instances per worker against sync';
    }

    public function description(): string
    {
        return 'A Symfony 7 app (FrameworkBundle, Doctrine DBAL) and a Laravel 12 app, served through Weft\'s bridges (the kernel '
            . 'boots once per instance, each request is reset) and through fpm mode (nginx + php-fpm, opcache on, the app boots on '
            . 'every request). Routes: `/` ("Hello World" through the router, middleware and controller; RoadRunner and Octane report '
            . '5–15x for resident over FPM), `/sleep` (`SELECT SLEEP(0.05)` on MariaDB through the framework\'s database layer) and '
            . '`/sql3` (the classic three queries on the seeded `test` table). A worker in coroutine mode holds a pool of framework '
            . 'instances (`--app-instances`, the "inst." column), each serving one request at a time, so requests that wait on PDO '
            . '(suspended by the extension\'s hooks) overlap; sync and fpm mode serve one request per worker. "1-core req/s" is what '
            . 'one core allows at the row\'s CPU time per request; "worker RSS" is one worker\'s resident memory after the load and '
            . '"MB/inst." what each further instance added to it. Production settings (APP_ENV=prod/production, no debug, no leak warnings). '
            . '`/sql3` is judged in two steps: the selection rows (each sync worker count, each pool size) choose each mode\'s best '
            . 'configuration by req/s, then those two run side by side ("paired" rows: both servers up, alternating rounds of 1 s, '
            . 'as many as the row\'s seconds, at least 3, each followed by one request that waits out what wrk left in flight) and the '
            . 'verdict is the median of the rounds\' coroutine/sync ratios, with '
            . 'each side\'s CPU per request: the best of several noisy rows of one mode against one row of the other would favour '
            . 'the mode with more rows.';
    }

    public function unavailable(Environment $env): ?string
    {
        $missing = parent::unavailable($env);
        if ($missing !== null) {
            return $missing;
        }
        foreach (self::APPS as $dir) {
            if (!\is_file("$env->root/var/fixtures/$dir/vendor/autoload.php") || !\is_file("$env->root/var/fixtures/$dir/weft.php")) {
                exec('bash ' . \escapeshellarg("$env->root/scripts/fixtures.sh") . ' 2>&1', $output, $status);
                if ($status !== 0) {
                    return 'the framework apps could not be installed (scripts/fixtures.sh): ' . \implode(' ', \array_slice($output, -3));
                }
                break;
            }
        }
        return null;
    }

    /** @return list<string> the apps asked for (`--app laravel,symfony`), default both */
    private function apps(): array
    {
        $asked = \array_values(\array_intersect($this->settings->apps ?? [], \array_keys(self::APPS)));
        return $asked === [] ? \array_keys(self::APPS) : $asked;
    }

    public function rows(Environment $env): array
    {
        $s = $this->settings;
        $rows = [];
        foreach ($this->apps() as $app) {
            foreach ($s->routes ?? \array_keys(self::ROUTES) as $route) {
                foreach ($this->matrix($route) as [$mode, $workers, $instances, $concurrency]) {
                    if ($s->modes !== null && !\in_array($mode, $s->modes, true)) {
                        continue;
                    }
                    foreach ($s->workers ?? $workers as $w) {
                        foreach ($mode === 'coroutine' ? ($s->instances ?? $instances) : [null] as $n) {
                            foreach ($s->concurrency ?? $concurrency as $c) {
                                $rows[] = new Row($this->name(), ['app' => $app, 'route' => $route, 'mode' => $mode, 'workers' => $w, 'instances' => $n, 'concurrency' => $c]);
                            }
                        }
                    }
                }
            }
        }
        $rows = $this->preSkipAll($rows, $env);
        $this->group($rows);
        return $rows;
    }

    /**
     * Once the selection rows have run: for each app and concurrency where `/sql3` ran in both modes, the
     * best sync worker count and the best pool (by req/s over every row that ran, those too short to judge
     * included: their rate is still a rate, and a selection that favours sync is only fair to it) run again
     * side by side, as two rows measured in alternating rounds. Selection and verdict are separate
     * measurements, so the luckiest selection row does not decide the verdict.
     */
    public function next(array $rows, Environment $env): array
    {
        $ok = Findings::ok($rows, ['route' => 'sql3']);
        $more = [];
        foreach ($this->apps() as $app) {
            foreach (Findings::values(Findings::ok($ok, ['app' => $app]), 'concurrency') as $c) {
                if (\array_filter($rows, static fn (Row $r): bool => $r->param('phase') === self::PAIRED && $r->param('app') === $app && $r->param('concurrency') == $c) !== []) {
                    continue; // measured (or tried) already
                }
                $selection = Findings::ok($ok, ['app' => $app, 'concurrency' => $c, 'phase' => null]);
                $sync = Findings::best(Findings::ok($selection, ['mode' => 'sync']));
                $co = Findings::best(Findings::ok($selection, ['mode' => 'coroutine', 'workers' => 1]));
                if ($sync === null || $co === null) {
                    continue;
                }
                $pair = [
                    new Row($this->name(), ['app' => $app, 'route' => 'sql3', 'mode' => 'sync', 'workers' => $sync->param('workers'), 'instances' => null, 'concurrency' => $c, 'phase' => self::PAIRED]),
                    new Row($this->name(), ['app' => $app, 'route' => 'sql3', 'mode' => 'coroutine', 'workers' => 1, 'instances' => $co->param('instances'), 'concurrency' => $c, 'phase' => self::PAIRED]),
                ];
                $this->groups[] = $pair;
                \array_push($more, ...$pair);
            }
        }
        return $more;
    }

    /**
     * Each route's configurations before the overrides: mode, worker counts, pool sizes (coroutine
     * mode), concurrency levels.
     *
     * @return list<array{0: string, 1: list<int>, 2: list<int>, 3: list<int>}>
     */
    private function matrix(string $route): array
    {
        $s = $this->settings;
        return match ($route) {
            // Resident against fpm as before, and the pool against today's one instance: a route that never
            // waits keeps using one instance, so the pool must cost nothing there.
            'hello' => [
                ['fpm', [1], [], $s->axis([32, 128], [32], null)],
                ...($s->quick ? [] : [['sync', [1], [], [32, 128]]]),
                ['coroutine', [1], [1, self::POOL], $s->axis([32, 128], [32], null)],
            ],
            // Sync (and fpm) serve 1 / 50 ms = 20 req/s a worker; the pool of 50 serves all 50 connections at
            // once. One instance in coroutine mode is today's behaviour (full run only).
            'sleep' => [
                ...($s->quick ? [] : [['fpm', [1], [], [self::SLEEP_CONCURRENCY]]]),
                ['sync', [1], [], [self::SLEEP_CONCURRENCY]],
                ['coroutine', [1], $s->axis([1, self::POOL], [self::POOL], null), [self::SLEEP_CONCURRENCY]],
            ],
            // One worker with a pool against sync mode with the worker count that serves it best.
            'sql3' => [
                ['sync', $s->axis([2, 8, 32], [8], null), [], $s->axis([100, 300], [100], null)],
                ['coroutine', [1], $s->axis([4, 8, self::SQL3_POOL, 64], [self::SQL3_POOL], null), [100, 300]],
            ],
            default => [],
        };
    }

    protected function preSkip(Row $row, Environment $env): ?string
    {
        if (!isset(self::ROUTES[(string) $row->param('route')])) {
            return \sprintf('unknown route "%s" (framework has %s)', $row->param('route'), \implode(', ', \array_keys(self::ROUTES)));
        }
        return parent::preSkip($row, $env);
    }

    public function notes(Environment $env): array
    {
        return [
            'The `/sleep` and `/sql3` rows use MariaDB (' . Sql3Scenario::url() . '; the `test` table is seeded before the first `/sql3` row), '
            . 'shared by all rows. ' . $this->databaseNote() . ' In coroutine mode a PDO query suspends the request only with the extension\'s '
            . 'hooks loaded: without them the pool rows wait on MariaDB like sync mode.',
            'Before each resident row is measured, an unmeasured load at the row\'s concurrency (1 s) boots the pool\'s '
            . 'instances and warms the caches. "MB/inst." is (worker RSS after the load − worker RSS with one instance) / (instances − 1), '
            . 'with the instances the workers report booted (a worker boots its first at the start and a further one only when the load needs it): an upper bound, as it includes what serving that many '
            . 'connections at once adds (compare the one-instance row of the same route).',
            'The coroutine hello rows of one app, worker count and concurrency that differ only in the pool size run with both servers up, '
            . 'in rounds of 1 s that alternate between them (as many rounds as the row\'s seconds): the target between them is 5 %, less '
            . 'than the drift of a shared machine over a minute. Their requests and CPU add up over the rounds; their latency percentiles '
            . 'are the median of the rounds\', and the verdict between them is the median of the rounds\' ratios. After each round one request to the same server waits until it has served what wrk '
            . 'left in flight, so that the next round does not start behind that backlog. The `/sql3` paired rows are measured the same way.',
        ];
    }

    public function estimate(Row $row): float
    {
        return $row->status === Row::PENDING ? parent::estimate($row) + ($this->settings->quick ? 2.5 : 3.0) : 0.0;
    }

    public function run(Row $row, Environment $env): void
    {
        if ($row->param('route') !== 'hello') {
            $this->pinDatabase($env);
        }
        if ($row->param('route') === 'sql3' && !$this->seeded) {
            try {
                Sql3Scenario::seed();
            } catch (\Throwable $e) {
                $row->fail('could not seed the test table: ' . $e->getMessage());
                return;
            }
            $this->seeded = true;
        }
        $group = $this->pendingGroup($row);
        if ($group !== null) {
            $this->runInterleaved($group, $env);
            return;
        }
        $server = $this->start($row, $env);
        if ($server === null) {
            return;
        }
        $path = self::ROUTES[(string) $row->param('route')];
        $resident = $row->param('mode') !== 'fpm';
        try {
            $before = $this->prepare($row, $env, $server);
            $waitedBefore = $resident ? self::runQueueWait($server) : null;
            $started = \hrtime(true);
            $this->loadServer($row, $env, $server, self::check((string) $row->param('route')), $path);
            if ($row->isOk() && $waitedBefore !== null && ($waited = self::runQueueWait($server)) !== null) {
                $row->metrics['wait_pct'] = \round(($waited - $waitedBefore) / \max(1, \hrtime(true) - $started) * 100, 1);
            }
            if ($before !== null && $row->isOk()) {
                $this->recordMemory($row, $before, self::workerRss($server), self::instancesBooted($server, $row) ?? 1);
            }
        } finally {
            $note = $server->stop();
            if ($note !== null) {
                $row->notes[] = "server $note";
            }
        }
    }

    private function start(Row $row, Environment $env): ?Service
    {
        $mode = (string) $row->param('mode');
        $arguments = ['--mode', $mode, '--workers', (string) $row->param('workers')];
        if ($mode !== 'fpm') {
            $arguments = [...$arguments, '--loop', self::defaultLoops($env)[0]];
        }
        if ($row->param('instances') !== null) {
            $arguments = [...$arguments, '--app-instances', (string) $row->param('instances')];
        }
        $dir = self::APPS[(string) $row->param('app')];
        return $this->startServer($row, $env, "$env->root/var/fixtures/$dir/weft.php", $arguments, self::serverEnv((string) $row->param('app')));
    }

    /**
     * Brings a started server to its steady state before it is measured.
     *
     * @return ?int the worker RSS with one instance booted (resident modes), before the warm-up load
     */
    private function prepare(Row $row, Environment $env, Service $server): ?int
    {
        $path = self::ROUTES[(string) $row->param('route')];
        // A framework's first requests in each process compile its caches and warm opcache (every
        // php-fpm child for itself): a row measures the steady state, not that.
        for ($i = 0; $i < 4 * (int) $row->param('workers'); $i++) {
            try {
                Probe::get('127.0.0.1', $server->port, $path, 15.0);
            } catch (\RuntimeException) {
                break;   // the check request says what is wrong
            }
        }
        if ($row->param('mode') === 'fpm') {
            return null;
        }
        $before = self::workerRss($server);
        $this->warmUp($env, $server, $row, $path);
        return $before;
    }

    /**
     * The rows measured together: the hello rows of one app, worker count and concurrency that differ
     * only in the pool size. The target between them is a 5 % difference, and on a machine shared with
     * other loads the CPU left to the server drifts by more than that within a minute: short rounds
     * that alternate between the servers give both the same share of the drift.
     *
     * @param list<Row> $rows
     */
    private function group(array $rows): void
    {
        $groups = [];
        foreach ($rows as $row) {
            if ($row->status === Row::PENDING && $row->param('route') === 'hello' && $row->param('mode') === 'coroutine') {
                $groups[\implode('|', [$row->param('app'), $row->param('workers'), $row->param('concurrency')])][] = $row;
            }
        }
        $this->groups = \array_values(\array_filter($groups, static fn (array $g): bool => \count($g) > 1));
    }

    /** @return ?list<Row> the group of a row when all of it is still to run */
    private function pendingGroup(Row $row): ?array
    {
        foreach ($this->groups as $group) {
            if (\in_array($row, $group, true)) {
                return \array_filter($group, static fn (Row $r): bool => $r->status !== Row::PENDING) === [] ? $group : null;
            }
        }
        return null;
    }

    /**
     * Measures a group's rows with all their servers up at once, in rounds of one second each that
     * alternate between the servers (the order reversed every round), for the run's duration per row.
     * Requests, CPU and wait add up over the rounds; a latency percentile is the median of the rounds'.
     *
     * @param list<Row> $rows
     */
    private function runInterleaved(array $rows, Environment $env): void
    {
        $servers = [];
        try {
            foreach ($rows as $i => $row) {
                $server = $this->start($row, $env);
                if ($server !== null) {
                    $servers[$i] = $server;
                }
            }
            $before = [];
            foreach ($servers as $i => $server) {
                $row = $rows[$i];
                $before[$i] = $this->prepare($row, $env, $server);
                $problem = self::probe($server, $row);
                if ($problem !== null) {
                    $row->fail($problem);
                    unset($servers[$i]);
                }
            }
            $paired = $rows[0]->param('phase') === self::PAIRED;
            $rounds = \max($paired ? self::PAIRED_MIN_ROUNDS : 2, (int) \round($env->settings->duration()));
            $measured = [];
            for ($round = 0; $round < $rounds && !$env->interrupted; $round++) {
                $order = $round % 2 === 0 ? \array_keys($servers) : \array_reverse(\array_keys($servers));
                foreach ($order as $i) {
                    if (isset($measured[$i]) && $measured[$i] === false) {
                        continue;
                    }
                    try {
                        $measured[$i][] = $this->round($rows[$i], $env, $servers[$i]);
                    } catch (\RuntimeException $e) {
                        $rows[$i]->fail('load failed: ' . $e->getMessage());
                        $measured[$i] = false;
                        continue;
                    }
                    // wrk cut the round's connections off with their requests in flight, which the server
                    // still serves (a second or two of /sql3 at c=300 on a loaded machine): one request
                    // answered after them means they are done, so the next round (often this server's
                    // again, the order alternating) measures its own requests and CPU, not the backlog.
                    try {
                        Probe::get('127.0.0.1', $servers[$i]->port, self::ROUTES[(string) $rows[$i]->param('route')], 15.0);
                    } catch (\RuntimeException) {
                        // The next round finds out whether the server still answers.
                    }
                }
            }
            foreach ($measured as $i => $parts) {
                if ($parts === false || $parts === []) {
                    continue;
                }
                $row = $rows[$i];
                $row->metrics = self::combine($parts);
                $row->status = Row::OK;
                $row->notes[] = $paired
                    ? \sprintf('the chosen configurations side by side: %d alternating rounds of 1 s each', \count($parts))
                    : \sprintf('interleaved with the other pool size(s): %d rounds of 1 s each', \count($parts));
                if ($before[$i] !== null) {
                    $this->recordMemory($row, $before[$i], self::workerRss($servers[$i]), self::instancesBooted($servers[$i], $row) ?? 1);
                }
            }
        } finally {
            foreach ($servers as $i => $server) {
                $note = $server->stop();
                if ($note !== null) {
                    $rows[$i]->notes[] = "server $note";
                }
            }
            foreach ($rows as $row) {
                if ($row->status === Row::PENDING) {
                    $row->fail($env->interrupted ? 'interrupted' : 'not measured');
                }
            }
        }
    }

    /** What is wrong with a server's answer to the check request of its row, or null. */
    private static function probe(Service $server, Row $row): ?string
    {
        $path = self::ROUTES[(string) $row->param('route')];
        try {
            $answer = Probe::get('127.0.0.1', $server->port, $path, 15.0);
        } catch (\RuntimeException $e) {
            return 'the server did not answer the check request: ' . $e->getMessage();
        }
        $problem = self::check((string) $row->param('route'))($answer);
        return $problem === null ? null : "wrong answer to the check request (GET $path): $problem";
    }

    /** @return array{result: array<string, mixed>, usage: array<string, mixed>, wait_ns: ?int, wall_ns: int} one second of load */
    private function round(Row $row, Environment $env, Service $server): array
    {
        $path = self::ROUTES[(string) $row->param('route')];
        $waited = self::runQueueWait($server);
        $started = \hrtime(true);
        $run = Measurement::run(
            $env,
            $server->pid(),
            Wrk::command((string) $env->tools->path('wrk'), "http://127.0.0.1:{$server->port}$path", (int) $row->param('concurrency'), 1.0),
            'wrk-' . $this->name(),
            1.0 + Wrk::TIMEOUT + 15,
        );
        $wall = \hrtime(true) - $started;
        $after = self::runQueueWait($server);
        return [
            'result' => WrkParser::parse($run['output'])->metrics(),
            'usage' => $run['usage'],
            'wait_ns' => $waited === null || $after === null ? null : $after - $waited,
            'wall_ns' => $wall,
        ];
    }

    /**
     * @param list<array{result: array<string, mixed>, usage: array<string, mixed>, wait_ns: ?int, wall_ns: int}> $parts
     * @return array<string, mixed>
     */
    private static function combine(array $parts): array
    {
        $median = static function (string $key) use ($parts): ?float {
            $values = \array_values(\array_filter(\array_map(static fn (array $p) => $p['result'][$key], $parts), static fn ($v) => $v !== null));
            if ($values === []) {
                return null;
            }
            \sort($values);
            $n = \count($values);
            return $n % 2 === 1 ? (float) $values[\intdiv($n, 2)] : ($values[$n / 2 - 1] + $values[$n / 2]) / 2;
        };
        $requests = \array_sum(\array_map(static fn (array $p): int => (int) $p['result']['requests'], $parts));
        $seconds = \array_sum(\array_map(static fn (array $p): float => (float) $p['result']['duration_s'], $parts));
        $errors = [];
        foreach ($parts as $p) {
            foreach ((array) $p['result']['errors'] as $kind => $count) {
                $errors[$kind] = ($errors[$kind] ?? 0) + (int) $count;
            }
        }
        $cpu = \array_sum(\array_map(static fn (array $p): float => (float) $p['usage']['cpu_s'], $parts));
        $wall = \array_sum(\array_map(static fn (array $p): int => $p['wall_ns'], $parts)) / 1e9;
        $pss = \array_map(static fn (array $p) => $p['usage']['pss_bytes'], $parts);
        $usage = [
            'cpu_s' => \round($cpu, 3),
            'cpu_pct' => $wall > 0 ? \round($cpu / $wall * 100, 1) : null,
            'rss_bytes' => \max(\array_map(static fn (array $p): int => (int) $p['usage']['rss_bytes'], $parts)),
            'pss_bytes' => \in_array(null, $pss, true) ? null : \max($pss),
            'processes' => \max(\array_map(static fn (array $p): int => (int) $p['usage']['processes'], $parts)),
            'samples' => \array_sum(\array_map(static fn (array $p): int => (int) $p['usage']['samples'], $parts)),
        ];
        $waits = \array_map(static fn (array $p): ?int => $p['wait_ns'], $parts);
        return [
            'tool' => 'wrk',
            'requests' => $requests,
            'duration_s' => \round($seconds, 3),
            'rps' => $seconds > 0 ? \round($requests / $seconds, 2) : 0.0,
            'p50_ms' => $median('p50_ms'),
            'p90_ms' => $median('p90_ms'),
            'p99_ms' => $median('p99_ms'),
            'max_ms' => ($max = \array_filter(\array_map(static fn (array $p) => $p['result']['max_ms'], $parts), static fn ($v) => $v !== null)) === [] ? null : (float) \max($max),
            'errors' => $errors,
            'rounds' => \count($parts),
            // Each round's own rate and CPU per request, in the order they ran: what a paired verdict compares round by round.
            'round_rps' => \array_map(static fn (array $p): float => (float) $p['result']['rps'], $parts),
            'round_cpu_us_per_req' => \array_map(static fn (array $p): ?float => (int) $p['result']['requests'] > 0 ? \round((float) $p['usage']['cpu_s'] / (int) $p['result']['requests'] * 1e6, 1) : null, $parts),
        ] + Measurement::serverMetrics($usage, $requests) + (\in_array(null, $waits, true) || $wall <= 0 ? [] : ['wait_pct' => \round(\array_sum($waits) / 1e9 / $wall * 100, 1)]);
    }

    /** @return array<string, string> */
    private static function serverEnv(string $app): array
    {
        $env = ['APP_ENV' => $app === 'symfony' ? 'prod' : 'production', 'APP_DEBUG' => '0', 'WEFT_LEAK_WARNINGS' => '0'];
        return $app === 'symfony'
            ? $env + ['DATABASE_URL' => Sql3Scenario::url()]
            : $env + ['DB_CONNECTION' => 'mysql', 'DB_URL' => Sql3Scenario::url()];
    }

    /** @return \Closure(array{status: int, headers: array<string, string>, body: string}): ?string */
    private static function check(string $route): \Closure
    {
        if ($route === 'hello') {
            return self::expectBody('Hello World');
        }
        if ($route === 'sleep') {
            return self::expectBody('ok');
        }
        return static function (array $answer): ?string {
            if ($answer['status'] !== 200) {
                return "status {$answer['status']} (body: " . \substr($answer['body'], 0, 160) . ')';
            }
            $data = \json_decode($answer['body'], true);
            return \is_array($data) && \is_array($data['rows'] ?? null) && \count($data['rows']) === 5 && \is_array($data['a'] ?? null)
                ? null
                : 'expected {"a": {...}, "b": {...}, "rows": [5 rows]}, got ' . \substr($answer['body'], 0, 100);
        };
    }

    /**
     * An unmeasured load at the row's concurrency: a pool boots its instances on demand, and booting
     * fifty of them inside a two-second measurement would measure the boots.
     */
    private function warmUp(Environment $env, Service $server, Row $row, string $path): void
    {
        $load = $env->startLoad(Wrk::command((string) $env->tools->path('wrk'), "http://127.0.0.1:{$server->port}$path", (int) $row->param('concurrency'), 1.0), 'wrk-framework-warm-up');
        $load->wait(1.0 + Wrk::TIMEOUT + 5);
        $load->terminate(1.0);
        $env->processes->forget($load);
    }

    /**
     * Nanoseconds the server's workers have spent runnable but waiting for a CPU (/proc/PID/schedstat),
     * or null where the kernel does not say. On a machine shared with other loads a worker that needs
     * a whole core gets less than 100 % of one: its CPU time plus this wait is what it asked for.
     */
    private static function runQueueWait(Service $server): ?int
    {
        $total = null;
        foreach (ProcessTree::members($server->pid()) as $pid) {
            $fields = $pid === $server->pid() ? false : @\file_get_contents("/proc/$pid/schedstat");
            if (\is_string($fields) && \preg_match('/^\d+ (\d+) \d+/', $fields, $m)) {
                $total = ($total ?? 0) + (int) $m[1];
            }
        }
        return $total;
    }

    private function recordMemory(Row $row, int $before, ?int $after, int $booted): void
    {
        if ($after === null) {
            return;
        }
        $row->metrics['worker_rss_start'] = $before;
        $row->metrics['worker_rss_bytes'] = $after;
        if ((int) ($row->param('instances') ?? 1) > 1) {
            $row->metrics['instances_booted'] = $booted;
        }
        if ($booted > 1) {
            $row->metrics['instance_bytes'] = (int) \round(\max(0, $after - $before) / ($booted - 1));
        }
    }

    /** Requests/s one core allows at the row's CPU time per request, times the cores its workers can use. */
    private function cpuBound(Row $row): ?float
    {
        $us = $row->number('cpu_us_per_req');
        if ($us === null || $us <= 0 || $row->param('mode') === 'fpm') {
            return null;
        }
        return 1e6 / $us * \min((int) $row->param('workers'), \max(1, $this->serverCores));
    }

    /** The workers ran or waited for a CPU nearly all the time: CPU-bound, though other loads took part of the core. */
    private function saturated(Row $row): bool
    {
        $cores = \min((int) $row->param('workers'), \max(1, $this->serverCores));
        return ($row->number('cpu_pct') ?? 0) + ($row->number('wait_pct') ?? 0) >= self::SATURATED * 100 * $cores;
    }

    public function columns(): array
    {
        return [
            Column::param('app', 'app'),
            Column::param('route', 'route'),
            Column::param('mode', 'mode'),
            Column::param('workers', 'workers'),
            Column::param('inst.', 'instances'),
            Column::param('conc.', 'concurrency'),
            Column::param('phase', 'phase'),
            ...Column::http(),
            new Column('CPU wait %', static fn (Row $r): string => Format::pct($r->number('wait_pct'))),
            new Column('1-core req/s', fn (Row $r): string => Format::rate($this->cpuBound($r))),
            new Column('worker RSS', static fn (Row $r): string => Format::bytes($r->number('worker_rss_bytes'))),
            new Column('MB/inst.', static fn (Row $r): string => Format::number($r->number('instance_bytes') === null ? null : $r->number('instance_bytes') / 1048576)),
            ...$this->abColumns(),
            Column::status(),
        ];
    }

    public function charts(): array
    {
        return [
            new Chart('framework-rps.svg', 'framework: requests/s against concurrency', 'concurrency', 'concurrent connections', 'rps', 'requests/s', ['app', 'route', 'mode', 'workers', 'instances']),
        ];
    }

    public function findings(array $rows): array
    {
        $ok = Findings::ok($rows);
        if ($ok === []) {
            return [Findings::NOTHING_RAN];
        }
        $out = self::ratios(Findings::ok($ok, ['route' => 'hello']));
        foreach ($this->apps() as $app) {
            $out[] = $this->sleepLine($app, $ok);
            $out[] = $this->sql3Line($app, $ok);
            $out[] = $this->helloPoolLine($app, $ok);
            $out[] = $this->memoryLine($app, $ok);
        }
        foreach (Findings::groupBy($ok, ['app', 'route']) as $group => $series) {
            $cpu = Findings::cpuPerRequest($series, 'mode');
            if ($cpu !== null) {
                $out[] = "$group: " . \lcfirst($cpu);
            }
        }
        $out[] = Findings::errorsLine($rows);
        return $out;
    }

    /** @param list<Row> $ok */
    private function sleepLine(string $app, array $ok): ?string
    {
        $parts = [];
        foreach (Findings::ok($ok, ['app' => $app, 'route' => 'sleep']) as $row) {
            $parts[] = \sprintf('%s %s req/s (%s CPU, %s µs/req)', $row->label('app', 'route', 'concurrency'), Format::rate($row->number('rps')), Format::pct($row->number('cpu_pct')) . ' %', Format::number($row->number('cpu_us_per_req')));
        }
        return $parts === [] ? null : \sprintf('%s /sleep (%d ms on MariaDB; a request at a time allows %d req/s a worker): %s.', $app, (int) \round(self::WAIT * 1000), (int) \round(1 / self::WAIT), \implode('; ', $parts));
    }

    /** @param list<Row> $ok */
    private function sql3Line(string $app, array $ok): ?string
    {
        $parts = [];
        foreach (Findings::values(Findings::ok($ok, ['app' => $app, 'route' => 'sql3']), 'concurrency') as $c) {
            $co = Findings::best(Findings::ok($ok, ['app' => $app, 'route' => 'sql3', 'mode' => 'coroutine', 'concurrency' => $c, 'phase' => null]));
            $sync = Findings::best(Findings::ok($ok, ['app' => $app, 'route' => 'sql3', 'mode' => 'sync', 'concurrency' => $c, 'phase' => null]));
            if ($co === null || $sync === null || $sync->number('rps') <= 0) {
                continue;
            }
            $part = \sprintf('c=%d: the selection chose coroutine (1 worker, %s instances, %s req/s) and sync (%s, %s req/s)', $c, $co->param('instances'), Format::rate($co->number('rps')), Findings::describe('workers', $sync->param('workers')), Format::rate($sync->number('rps')));
            $pair = self::pair($ok, $app, (int) $c);
            $parts[] = $part . ($pair === null
                ? '; not measured side by side'
                : \sprintf('; side by side, coroutine at %sx sync (median of %d rounds), %s against %s µs/req', \number_format($pair[2], 2), \count($pair[3]), Format::number($pair[1]->number('cpu_us_per_req')), Format::number($pair[0]->number('cpu_us_per_req'))));
        }
        return $parts === [] ? null : "$app /sql3: " . \implode('; ', $parts) . '.';
    }

    /** @param list<Row> $ok */
    private function helloPoolLine(string $app, array $ok): ?string
    {
        $parts = [];
        foreach ($this->helloPairs($app, $ok) as [$pool, $one]) {
            $parts[] = \sprintf('w=%s c=%s: %s req/s with %s instances, %s with 1 (%s)', $pool->param('workers'), $pool->param('concurrency'), Format::rate($pool->number('rps')), $pool->param('instances'), Format::rate($one->number('rps')), Format::change($one->number('rps'), $pool->number('rps')));
        }
        return $parts === [] ? null : "$app /, coroutine, the pool against one instance: " . \implode('; ', $parts) . '.';
    }

    /** @param list<Row> $ok */
    private function memoryLine(string $app, array $ok): ?string
    {
        $parts = [];
        foreach (Findings::ok($ok, ['app' => $app], 'instance_bytes') as $row) {
            $parts[] = \sprintf('%s: %s MB each (worker %s with 1 instance, %s with %d)', $row->label('app'), Format::number($row->number('instance_bytes') / 1048576), Format::bytes($row->number('worker_rss_start')), Format::bytes($row->number('worker_rss_bytes')), (int) $row->number('instances_booted'));
        }
        return $parts === [] ? null : "$app, memory per framework instance (worker RSS growth / further instances): " . \implode('; ', $parts) . '.';
    }

    /**
     * Each coroutine hello row with a pool, with the one-instance row of the same configuration.
     *
     * @param list<Row> $ok
     * @return list<array{0: Row, 1: Row}>
     */
    private function helloPairs(string $app, array $ok): array
    {
        $pairs = [];
        foreach (Findings::ok($ok, ['app' => $app, 'route' => 'hello', 'mode' => 'coroutine']) as $row) {
            if ((int) $row->param('instances') <= 1) {
                continue;
            }
            $one = Findings::ok($ok, ['app' => $app, 'route' => 'hello', 'mode' => 'coroutine', 'instances' => 1, 'workers' => $row->param('workers'), 'concurrency' => $row->param('concurrency')]);
            if ($one !== []) {
                $pairs[] = [$row, $one[0]];
            }
        }
        return $pairs;
    }

    public function checks(array $rows): array
    {
        $checks = [];
        $ok = Findings::ok($rows);
        foreach ($this->apps() as $app) {
            $routes = $this->settings->routes ?? \array_keys(self::ROUTES);
            if (\in_array('hello', $routes, true)) {
                $checks[] = self::residentCheck($app, $rows);
                $checks[] = $this->helloPoolCheck($app, $ok);
            }
            if (\in_array('sleep', $routes, true)) {
                $checks[] = $this->sleepCheck($app, $ok);
            }
            if (\in_array('sql3', $routes, true)) {
                $checks[] = $this->sql3FastCheck($app, $ok);
                $checks[] = $this->sql3FlatCheck($app, $ok);
            }
            if (\array_intersect(['sleep', 'sql3'], $routes) !== []) {
                $checks[] = $this->memoryCheck($app, $ok);
            }
        }
        return $checks;
    }

    /** @param list<Row> $rows */
    private static function residentCheck(string $app, array $rows): Check
    {
        $fpm = Findings::best(Findings::ok($rows, ['app' => $app, 'route' => 'hello', 'mode' => 'fpm']));
        $resident = Findings::best(Findings::ok($rows, ['app' => $app, 'route' => 'hello', 'mode' => ['sync', 'coroutine']]));
        $claim = "$app: resident several times fpm (RoadRunner and Octane report 5–15x)";
        return $fpm === null || $resident === null
            ? Check::unknown($claim, 'a fpm or a resident hello row did not run')
            : new Check($claim, $resident->number('rps') >= 3 * $fpm->number('rps'), \sprintf(
                '%s req/s resident (%s) against %s req/s under fpm: %s',
                Format::rate($resident->number('rps')),
                $resident->label('app', 'route'),
                Format::rate($fpm->number('rps')),
                Format::times($resident->number('rps') / \max(1e-9, $fpm->number('rps'))),
            ));
    }

    /** @param list<Row> $ok */
    private function helloPoolCheck(string $app, array $ok): Check
    {
        $claim = \sprintf('%s /: coroutine with a pool of instances at least %sx coroutine with one instance (a route that never waits pays nothing for the pool)', $app, self::HELLO_POOL_KEEPS);
        $pairs = $this->helloPairs($app, $ok);
        if ($pairs === []) {
            return Check::unknown($claim, 'no coroutine hello row with a pool ran next to a one-instance row of the same configuration');
        }
        $failing = [];
        $parts = [];
        foreach ($pairs as [$pool, $one]) {
            // Measured in alternating rounds: the median of the rounds' ratios (round k of each ran next to
            // the other's), as for /sql3's paired rows, so that one round the machine took from the
            // server does not decide; the totals' ratio when the rows were not measured in rounds.
            $ratios = self::roundRatios($pool, $one);
            $ratio = \count($ratios) >= self::PAIRED_MIN_ROUNDS
                ? (float) self::median($ratios)
                : $pool->number('rps') / \max(1e-9, $one->number('rps'));
            if ($ratio < self::HELLO_POOL_KEEPS) {
                $failing[] = $pool->label();
            }
            $parts[] = \sprintf(
                'w=%s c=%s: %s req/s (%s inst.) against %s (1 inst.)%s: %sx; CPU %s against %s µs/req',
                $pool->param('workers'),
                $pool->param('concurrency'),
                Format::rate($pool->number('rps')),
                $pool->param('instances'),
                Format::rate($one->number('rps')),
                \count($ratios) >= self::PAIRED_MIN_ROUNDS
                    ? \sprintf(', median of the %d rounds\' ratios (%s to %sx)', \count($ratios), \number_format(\min($ratios), 2), \number_format(\max($ratios), 2))
                    : '',
                Format::ratio($ratio, self::HELLO_POOL_KEEPS),
                Format::number($pool->number('cpu_us_per_req')),
                Format::number($one->number('cpu_us_per_req')),
            );
        }
        return new Check($claim, $failing === [], \implode('; ', $parts), $failing);
    }

    /** @param list<Row> $ok */
    private function sleepCheck(string $app, array $ok): Check
    {
        $claim = \sprintf('%s /sleep: coroutine with a pool at least %dx sync mode (same workers and concurrency), or at the CPU limit of its core(s) (CPU + time waiting for a CPU ≥ %d %%)', $app, (int) self::SLEEP_TIMES_SYNC, (int) (self::SATURATED * 100));
        $holds = null;
        $failing = [];
        $parts = [];
        foreach (Findings::ok($ok, ['app' => $app, 'route' => 'sleep', 'mode' => 'coroutine']) as $co) {
            if ((int) $co->param('instances') <= 1) {
                continue;
            }
            $sync = Findings::ok($ok, ['app' => $app, 'route' => 'sleep', 'mode' => 'sync', 'workers' => $co->param('workers'), 'concurrency' => $co->param('concurrency')]);
            // Without a sync row long enough to judge (at c=50 a sync request queues ~2.5 s behind the
            // others, so a 10 s row's p99 can pass a third of the run), sync mode is taken at the most it
            // can serve: one 50 ms wait a request per worker. No measured rate can be above that bound,
            // so the check is never easier without the row.
            $syncRps = $sync !== [] ? $sync[0]->number('rps') : (int) $co->param('workers') / self::WAIT;
            $syncText = $sync !== [] ? Format::rate($syncRps) : \sprintf('at most %s req/s (one %d ms wait a request per worker; no sync row long enough to judge)', Format::rate($syncRps), (int) (self::WAIT * 1000));
            $ratio = $co->number('rps') / \max(1e-9, $syncRps);
            $pass = $ratio >= self::SLEEP_TIMES_SYNC || $this->saturated($co);
            $holds = ($holds ?? true) && $pass;
            if (!$pass) {
                $failing[] = $co->label();
            }
            $parts[] = \sprintf(
                'w=%s c=%s: coroutine (%s inst.) %s req/s against sync %s: %s; coroutine CPU %s %% + %s %% waiting for a CPU, %s µs/req (one core allows %s req/s)%s',
                $co->param('workers'), $co->param('concurrency'), $co->param('instances'), Format::rate($co->number('rps')), $syncText, Format::times($ratio),
                Format::pct($co->number('cpu_pct')), Format::pct($co->number('wait_pct')), Format::number($co->number('cpu_us_per_req')), Format::rate($this->cpuBound($co)),
                $ratio >= self::SLEEP_TIMES_SYNC ? '' : ($this->saturated($co) ? ': the CPU bound held' : ': neither bound reached'),
            );
        }
        return $holds === null
            ? Check::unknown($claim, 'no coroutine sleep row with a pool ran')
            : new Check($claim, $holds, \implode('; ', $parts), $failing);
    }

    /** @param list<Row> $ok */
    private function sql3FastCheck(string $app, array $ok): Check
    {
        $claim = \sprintf('%s /sql3: coroutine (1 worker, a pool) at least as fast as sync with its best worker count, at every concurrency (median of side-by-side rounds, within %d %% for noise)', $app, (int) (self::SQL3_NOISE * 100));
        $co = Findings::ok($ok, ['app' => $app, 'route' => 'sql3', 'mode' => 'coroutine', 'workers' => 1]);
        $sync = Findings::ok($ok, ['app' => $app, 'route' => 'sql3', 'mode' => 'sync']);
        $levels = \array_values(\array_intersect(Findings::values($co, 'concurrency'), Findings::values($sync, 'concurrency')));
        if ($levels === []) {
            return Check::unknown($claim, 'coroutine (1 worker) and sync rows did not both run at one concurrency');
        }
        $failing = [];
        $parts = [];
        foreach ($levels as $c) {
            $pair = self::pair($ok, $app, (int) $c);
            if ($pair !== null) {
                [$pairedSync, $pairedCo, $ratio, $ratios] = $pair;
                if ($ratio < 1 - self::SQL3_NOISE) {
                    $failing[] = $pairedCo->label() . ' (slower than ' . $pairedSync->label() . ')';
                }
                $parts[] = \sprintf(
                    'c=%d, side by side in %d alternating rounds: coroutine (%s inst.) median %s req/s, %s µs/req, against sync (w=%s) median %s req/s, %s µs/req: median of the rounds\' ratios %sx (%s to %sx), %s',
                    $c, \count($ratios), $pairedCo->param('instances'), Format::rate(self::median($pairedCo->metric('round_rps'))), Format::number($pairedCo->number('cpu_us_per_req')),
                    $pairedSync->param('workers'), Format::rate(self::median($pairedSync->metric('round_rps'))), Format::number($pairedSync->number('cpu_us_per_req')),
                    Format::ratio($ratio, 1 - self::SQL3_NOISE), \number_format(\min($ratios), 2), \number_format(\max($ratios), 2),
                    $ratio >= 1 ? 'coroutine ahead' : ($ratio >= 1 - self::SQL3_NOISE ? 'level within the noise allowed' : 'sync ahead'),
                );
                continue;
            }
            // Not measured side by side (interrupted, or a paired row too short to judge): the best row of
            // each mode, which favours the mode with more rows; said so.
            $bestCo = Findings::best(Findings::ok($co, ['concurrency' => $c, 'phase' => null]));
            $bestSync = Findings::best(Findings::ok($sync, ['concurrency' => $c, 'phase' => null]));
            if ($bestCo === null || $bestSync === null) {
                continue;
            }
            if ($bestCo->number('rps') < $bestSync->number('rps') * (1 - self::SQL3_NOISE)) {
                $failing[] = $bestCo->label() . ' (slower than ' . $bestSync->label() . ')';
            }
            $parts[] = \sprintf('c=%d (not side by side: the best row of each mode): coroutine %s req/s (%s inst., %s µs/req) against sync %s (w=%s, %s µs/req), %s', $c, Format::rate($bestCo->number('rps')), $bestCo->param('instances'), Format::number($bestCo->number('cpu_us_per_req')), Format::rate($bestSync->number('rps')), $bestSync->param('workers'), Format::number($bestSync->number('cpu_us_per_req')), Format::change($bestSync->number('rps'), $bestCo->number('rps')));
        }
        if ($parts === []) {
            return Check::unknown($claim, 'coroutine (1 worker) and sync rows did not both run at one concurrency');
        }
        return new Check($claim, $failing === [], \implode('; ', $parts), $failing);
    }

    /**
     * The paired rows of an app and concurrency, both judged, with the median of their rounds' ratios
     * (coroutine over sync, round k of each: measured next to each other) and those ratios.
     *
     * @param list<Row> $ok
     * @return ?array{0: Row, 1: Row, 2: float, 3: non-empty-list<float>}
     */
    private static function pair(array $ok, string $app, int $c): ?array
    {
        $sync = Findings::ok($ok, ['app' => $app, 'route' => 'sql3', 'mode' => 'sync', 'concurrency' => $c, 'phase' => self::PAIRED]);
        $co = Findings::ok($ok, ['app' => $app, 'route' => 'sql3', 'mode' => 'coroutine', 'concurrency' => $c, 'phase' => self::PAIRED]);
        if ($sync === [] || $co === []) {
            return null;
        }
        $ratios = self::roundRatios($co[0], $sync[0]);
        if ($ratios === []) {
            return null;
        }
        return [$sync[0], $co[0], (float) self::median($ratios), $ratios];
    }

    /**
     * Round k of $row over round k of $other, for rows measured in alternating rounds (round k of each
     * ran next to the other's); empty when either has no rounds.
     *
     * @return list<float>
     */
    private static function roundRatios(Row $row, Row $other): array
    {
        $a = \array_values((array) $row->metric('round_rps'));
        $b = \array_values((array) $other->metric('round_rps'));
        $ratios = [];
        for ($k = 0, $n = \min(\count($a), \count($b)); $k < $n; $k++) {
            if ((float) $b[$k] > 0) {
                $ratios[] = (float) $a[$k] / (float) $b[$k];
            }
        }
        return $ratios;
    }

    /** The median of a list of numbers, null for none (or for what is not a list). */
    private static function median(mixed $values): ?float
    {
        if (!\is_array($values)) {
            return null;
        }
        $values = \array_values(\array_map('floatval', \array_filter($values, static fn ($v): bool => \is_int($v) || \is_float($v))));
        if ($values === []) {
            return null;
        }
        \sort($values);
        $n = \count($values);
        return $n % 2 === 1 ? $values[\intdiv($n, 2)] : ($values[$n / 2 - 1] + $values[$n / 2]) / 2;
    }

    /** @param list<Row> $ok */
    private function sql3FlatCheck(string $app, array $ok): Check
    {
        $claim = \sprintf('%s /sql3: coroutine (1 worker, a pool) flat across concurrency (lowest ≥ %d %% of highest req/s)', $app, (int) (self::SQL3_FLAT * 100));
        $groups = \array_filter(
            Findings::groupBy(Findings::ok($ok, ['app' => $app, 'route' => 'sql3', 'mode' => 'coroutine', 'workers' => 1, 'phase' => null]), ['instances']),
            static fn (array $g): bool => \count($g) > 1,
        );
        if ($groups === []) {
            return Check::unknown($claim, 'no coroutine sql3 configuration ran at two concurrency levels or more');
        }
        // The target is that a pool can be sized to stay flat: one flat pool size is enough.
        $holds = false;
        $parts = [];
        foreach ($groups as $instances => $group) {
            $flat = (float) Findings::flatness($group);
            $holds = $holds || $flat >= self::SQL3_FLAT;
            $parts[] = \sprintf('%s inst.: %s req/s at c=%s (%d %%)', $instances, \implode(' / ', \array_map(static fn (Row $r): string => Format::rate($r->number('rps')), $group)), \implode('/', Findings::values($group, 'concurrency')), (int) \round($flat * 100));
        }
        return new Check($claim, $holds, \implode('; ', $parts) . (\count($groups) > 1 ? ' (holds when one pool size is flat)' : ''));
    }

    /** @param list<Row> $ok */
    private function memoryCheck(string $app, array $ok): Check
    {
        $claim = "$app: memory per framework instance measured (worker RSS with 1 instance against after the pool booted)";
        $rows = Findings::ok($ok, ['app' => $app], 'instance_bytes');
        if ($rows === []) {
            return Check::unknown($claim, 'no coroutine row with a pool of more than one instance ran on /sleep or /sql3');
        }
        $lowest = Findings::worst($rows, 'instance_bytes');
        return new Check($claim, true, \sprintf(
            '%s MB per instance at most (%s: worker %s with 1 instance, %s with %d)',
            Format::number($lowest->number('instance_bytes') / 1048576),
            $lowest->label('app'),
            Format::bytes($lowest->number('worker_rss_start')),
            Format::bytes($lowest->number('worker_rss_bytes')),
            (int) $lowest->number('instances_booted'),
        ));
    }

    /** @param list<Row> $ok @return list<string> */
    private static function ratios(array $ok): array
    {
        $lines = [];
        foreach (Findings::groupBy($ok, ['app', 'concurrency']) as $group => $series) {
            $fpm = Findings::best(Findings::ok($series, ['mode' => 'fpm']));
            if ($fpm === null) {
                continue;
            }
            $parts = [];
            foreach (Findings::ok($series, ['mode' => ['sync', 'coroutine']]) as $row) {
                $parts[] = \sprintf('%s%s %s req/s (%s fpm)', $row->param('mode'), $row->param('instances') === null ? '' : " ({$row->param('instances')} inst.)", Format::rate($row->number('rps')), Format::times($row->number('rps') / \max(1e-9, $fpm->number('rps'))));
            }
            if ($parts !== []) {
                $lines[] = \sprintf('%s (route /): fpm %s req/s; %s.', $group, Format::rate($fpm->number('rps')), \implode(', ', $parts));
            }
        }
        return $lines;
    }
}
