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

/** docs/benchmarks.md, sql3: three SQL queries per request, fpm against resident sync against coroutine. */
final class Sql3Scenario extends HttpScenario
{
    /** Flat: the lowest throughput across concurrency at least this share of the highest. */
    private const FLAT = 0.85;
    /** A "multi-second tail": a request that took this long or longer. */
    private const TAIL_MS = 2000.0;
    /** "At least as fast" leaves this much room for run-to-run noise. */
    private const NOISE = 0.05;

    /** The handler of each `--app`: Weft's MySQL client (default) or plain PDO, suspended by the hooks. */
    private const APPS = ['weft' => 'sql3.php', 'pdo' => 'sql3-pdo.php'];

    private bool $seeded = false;

    public function name(): string
    {
        return 'sql3';
    }

    public function title(): string
    {
        return 'sql3 — FPM vs resident vs coroutine on three SQL queries';
    }

    public function description(): string
    {
        return 'examples/sql3.php runs `select * from test where id = 1`, `... id = 2` and `select * from test limit 5` '
            . 'against MariaDB (' . self::url() . ') and returns the last result as JSON. Published (1 CPU, ab -n 10000): resident '
            . 'sync with 8 workers 839 / 684 / 689 req/s at concurrency 100 / 300 / 500; with 50 workers 771 / 305 / 379 (slower, '
            . 'with 3-second tails); coroutine with 8 workers 834 / 838 / 824. `--app pdo` runs examples/sql3-pdo.php instead: '
            . 'the same queries with plain PDO (a small per-worker pool of connections), which suspend in coroutine mode '
            . 'only through the extension\'s hooks.';
    }

    public static function url(): string
    {
        return (string) (\getenv('DATABASE_URL') ?: (\getenv('WEFT_TEST_MYSQL_URL') ?: 'mysql://weft:weft@127.0.0.1:13306/weft'));
    }

    public function unavailable(Environment $env): ?string
    {
        return parent::unavailable($env)
            ?? self::missingFiles($env, \array_values(\array_intersect_key(self::APPS, \array_flip($this->apps()))))
            ?? CoreScenario::unreachable(self::url(), 'MariaDB' . ($env->tools->has('mariadb') ? '' : ' (not installed here: Debian package mariadb-server)'));
    }

    /** @return list<string> the apps asked for (`--app`), default Weft's client */
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
            foreach ($s->axis(['fpm', 'sync', 'coroutine'], ['fpm', 'sync', 'coroutine'], $s->modes) as $mode) {
                foreach ($mode === 'fpm' ? [null] : ($s->loops ?? self::defaultLoops($env)) as $loop) {
                    foreach ($s->axis([2, 8, 50], [8], $s->workers) as $w) {
                        foreach ($s->axis([100, 300, 500], [100, 500], $s->concurrency) as $c) {
                            $row = new Row($this->name(), ['mode' => $mode, 'loop' => $loop, 'workers' => $w, 'concurrency' => $c] + ($named ? ['app' => $app] : []));
                            if (!isset(self::APPS[$app])) {
                                $row->skip(\sprintf('unknown app "%s" (sql3 has %s)', $app, \implode(', ', \array_keys(self::APPS))));
                            } elseif ($app === 'pdo' && !\extension_loaded('pdo_mysql')) {
                                $row->skip('pdo_mysql is not loaded (Debian: php8.2-mysql)');
                            }
                            $rows[] = $row;
                        }
                    }
                }
            }
        }
        return $this->preSkipAll($rows, $env);
    }

    public function notes(Environment $env): array
    {
        return ['The `test` table (id, name; 500 rows) is created and seeded by the scenario before the first row. MariaDB is shared by all rows. ' . $this->databaseNote()];
    }

    public function run(Row $row, Environment $env): void
    {
        $this->pinDatabase($env);
        if (!$this->seeded) {
            self::seed();
            $this->seeded = true;
        }
        $check = static function (array $answer): ?string {
            if ($answer['status'] !== 200) {
                return "status {$answer['status']} (body: " . \substr($answer['body'], 0, 160) . ')';
            }
            $rows = \json_decode($answer['body'], true);
            return \is_array($rows) && \count($rows) === 5 ? null : 'expected a JSON list of 5 rows, got ' . \substr($answer['body'], 0, 100);
        };
        $this->measureHttp($row, $env, self::exampleFile($env, self::APPS[(string) ($row->param('app') ?? 'weft')]), self::serveArguments($row), $check, '/', ['DATABASE_URL' => self::url()]);
    }

    /** Creates and fills the table with Weft's own fixtures helper when there is one, else with PDO (the framework scenario's /sql3 reads it too). */
    public static function seed(): void
    {
        if (\class_exists('Weft\\Client\\Mysql\\Fixtures') && \class_exists('Weft\\Client\\Mysql\\Connection')) {
            $connection = \Weft\Client\Mysql\Connection::connect(self::url());
            try {
                \Weft\Client\Mysql\Fixtures::seedTestTable($connection);
            } finally {
                $connection->close();
            }
            return;
        }
        $p = \parse_url(self::url());
        $pdo = new \PDO(
            \sprintf('mysql:host=%s;port=%d;dbname=%s', $p['host'] ?? '127.0.0.1', $p['port'] ?? 3306, \ltrim($p['path'] ?? '/weft', '/')),
            \urldecode($p['user'] ?? ''),
            \urldecode($p['pass'] ?? ''),
            [\PDO::ATTR_ERRMODE => \PDO::ERRMODE_EXCEPTION],
        );
        $pdo->exec('CREATE TABLE IF NOT EXISTS test (id INT PRIMARY KEY, name VARCHAR(64)) ENGINE=InnoDB');
        $values = [];
        for ($id = 1; $id <= 500; $id++) {
            $values[] = "($id, 'name-$id')";
        }
        $pdo->exec('INSERT IGNORE INTO test (id, name) VALUES ' . \implode(', ', $values));
    }

    public function columns(): array
    {
        return [
            ...($this->settings->apps !== null ? [Column::param('app', 'app')] : []),
            Column::param('mode', 'mode'),
            Column::param('loop', 'loop'),
            Column::param('workers', 'workers'),
            Column::param('conc.', 'concurrency'),
            ...Column::http(),
            ...$this->abColumns(),
            Column::status(),
        ];
    }

    public function charts(): array
    {
        $series = $this->settings->apps !== null ? ['app', 'mode', 'loop', 'workers'] : ['mode', 'loop', 'workers'];
        return [
            new Chart('sql3-rps.svg', 'sql3: requests/s against concurrency', 'concurrency', 'concurrent connections', 'rps', 'requests/s', $series),
            new Chart('sql3-p99.svg', 'sql3: p99 latency against concurrency', 'concurrency', 'concurrent connections', 'p99_ms', 'p99 latency (ms)', $series),
        ];
    }

    public function findings(array $rows): array
    {
        $ok = Findings::ok($rows);
        if ($ok === []) {
            return [Findings::NOTHING_RAN];
        }
        $out = [Findings::winner($ok, 'mode') . '.'];
        \array_push($out, ...Findings::winnersByConcurrency($ok, 'mode'));
        foreach (Findings::groupBy(Findings::ok($ok, ['mode' => 'coroutine']), $this->settings->apps !== null ? ['app', 'workers'] : ['workers']) as $group => $series) {
            $flat = Findings::flatness($series);
            if ($flat !== null) {
                $out[] = \sprintf('coroutine with %s kept %d %% of its best throughput across concurrency %s.', $group, (int) \round($flat * 100), \implode('/', Findings::values($series, 'concurrency')));
            }
        }
        $tails = \array_filter($ok, static fn (Row $r) => ($r->number('max_ms') ?? 0) >= self::TAIL_MS || ($r->metric('errors')['timeout'] ?? 0) > 0);
        $out[] = $tails === []
            ? 'No row had a request slower than 2 s.'
            : 'Multi-second tails (max ≥ 2 s or timeouts): ' . \implode('; ', \array_map(static fn (Row $r) => $r->label() . ' max ' . Format::ms($r->number('max_ms')) . ' ms', $tails)) . '.';
        $cpu = Findings::cpuPerRequest($ok, 'mode');
        if ($cpu !== null) {
            $out[] = $cpu;
        }
        $out[] = Findings::workersLine($ok, ['mode', 'loop', 'concurrency', 'app']);
        $out[] = Findings::errorsLine($rows);
        return $out;
    }

    public function checks(array $rows): array
    {
        if ($this->settings->apps === null) {
            return $this->checksOf($rows, '');
        }
        // Each app against itself: the PDO rows are not compared with the Weft client's.
        $checks = [];
        foreach ($this->apps() as $app) {
            \array_push($checks, ...$this->checksOf(\array_values(\array_filter($rows, static fn (Row $r): bool => $r->param('app') === $app)), "$app app: "));
        }
        return $checks;
    }

    /**
     * @param list<Row> $rows
     * @return list<Check>
     */
    private function checksOf(array $rows, string $prefix): array
    {
        $co = Findings::ok($rows, ['mode' => 'coroutine']);
        $sync = Findings::ok($rows, ['mode' => 'sync']);
        $checks = [];

        $claim = $prefix . \sprintf('coroutine mode flat across concurrency (lowest ≥ %d %% of highest requests/s)', (int) (self::FLAT * 100));
        $groups = \array_filter(Findings::groupBy($co, $this->settings->apps !== null ? ['app', 'loop', 'workers'] : ['loop', 'workers']), static fn (array $g) => \count($g) > 1);
        if ($groups === []) {
            $checks[] = Check::unknown($claim, 'no coroutine configuration ran at two concurrency levels or more');
        } else {
            $failing = [];
            $parts = [];
            foreach ($groups as $name => $group) {
                $flat = (float) Findings::flatness($group);
                if ($flat < self::FLAT) {
                    $failing[] = "coroutine $name";
                }
                $parts[] = \sprintf('%s: %s req/s (%d %%)', $name, \implode(' / ', \array_map(static fn (Row $r) => Format::rate($r->number('rps')), $group)), (int) \round($flat * 100));
            }
            $checks[] = new Check($claim, $failing === [], \implode('; ', $parts), $failing);
        }

        $claim = $prefix . 'coroutine mode has no multi-second tails (every request under 2 s, no timeouts)';
        if ($co === []) {
            $checks[] = Check::unknown($claim, 'no coroutine row ran');
        } else {
            $worst = Findings::best($co, 'max_ms');
            $timeouts = \array_sum(\array_map(static fn (Row $r) => $r->metric('errors')['timeout'] ?? 0, $co));
            $holds = $worst !== null && $worst->number('max_ms') < self::TAIL_MS && $timeouts === 0;
            $tails = \array_values(\array_map(static fn (Row $r): string => $r->label(), \array_filter($co, static fn (Row $r): bool => $r->number('max_ms') >= self::TAIL_MS || ($r->metric('errors')['timeout'] ?? 0) > 0)));
            $syncWorst = Findings::best($sync, 'max_ms');
            $checks[] = new Check($claim, $holds, \sprintf(
                'slowest coroutine request %s ms (%s), %d timeouts%s',
                Format::ms($worst?->number('max_ms')), $worst?->label() ?? '?', $timeouts,
                $syncWorst === null ? '' : '; slowest sync request ' . Format::ms($syncWorst->number('max_ms')) . ' ms (' . $syncWorst->label() . ')',
            ), $tails);
        }

        $claim = $prefix . \sprintf('coroutine mode at least as fast as the best sync configuration, at every concurrency (within %d %% for noise)', (int) (self::NOISE * 100));
        $concurrencies = \array_values(\array_intersect(Findings::values($co, 'concurrency'), Findings::values($sync, 'concurrency')));
        if ($concurrencies === []) {
            $checks[] = Check::unknown($claim, 'coroutine and sync rows did not both run at one concurrency');
        } else {
            $failing = [];
            $parts = [];
            foreach ($concurrencies as $c) {
                $bestCo = Findings::best(Findings::ok($co, ['concurrency' => $c]));
                $bestSync = Findings::best(Findings::ok($sync, ['concurrency' => $c]));
                if ($bestCo->number('rps') < $bestSync->number('rps') * (1 - self::NOISE)) {
                    $failing[] = $bestCo->label() . ' (slower than ' . $bestSync->label() . ')';
                }
                $parts[] = \sprintf('c=%d: coroutine %s (w=%s) vs sync %s (w=%s), %s', $c, Format::rate($bestCo->number('rps')), $bestCo->param('workers'), Format::rate($bestSync->number('rps')), $bestSync->param('workers'), Format::change($bestSync->number('rps'), $bestCo->number('rps')));
            }
            $checks[] = new Check($claim, $failing === [], \implode('; ', $parts), $failing);
        }

        $claim = $prefix . 'the report says how far apart the modes are';
        $winner = Findings::winner(Findings::ok($rows), 'mode');
        $checks[] = $winner === null || \count(Findings::values(Findings::ok($rows), 'mode')) < 2
            ? Check::unknown($claim, 'fewer than two modes ran')
            : new Check($claim, true, $winner);
        return $checks;
    }
}
