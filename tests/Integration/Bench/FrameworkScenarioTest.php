<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Bench;

use PHPUnit\Framework\TestCase;

/**
 * `bin/weft bench framework` end to end on tiny matrices: both fixture apps, resident and under fpm on
 * the hello route, and the database routes (/sleep, /sql3) of one app in sync mode and in coroutine mode
 * with a pool of framework instances (issue 22).
 */
final class FrameworkScenarioTest extends TestCase
{
    private string $out;

    protected function setUp(): void
    {
        $this->out = sys_get_temp_dir() . '/weft-bench-framework-' . getmypid() . '-' . bin2hex(random_bytes(3));
    }

    protected function tearDown(): void
    {
        if (is_dir($this->out)) {
            foreach (new \RecursiveIteratorIterator(new \RecursiveDirectoryIterator($this->out, \FilesystemIterator::SKIP_DOTS), \RecursiveIteratorIterator::CHILD_FIRST) as $entry) {
                $entry->isDir() ? rmdir($entry->getPathname()) : unlink($entry->getPathname());
            }
            rmdir($this->out);
        }
    }

    public function testBothAppsResidentAndUnderFpm(): void
    {
        $root = \dirname(__DIR__, 3);
        $command = [PHP_BINARY, "$root/bin/weft", 'bench', 'framework', '--duration', '2', '--workers', '1',
            '--concurrency', '4', '--modes', 'fpm,coroutine', '--routes', 'hello', '--app-instances', '1,2', '--out', $this->out];
        $process = proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, $root);
        self::assertIsResource($process);
        $output = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        self::assertSame(0, proc_close($process), $output);

        $results = json_decode((string) file_get_contents("$this->out/results.json"), true);
        $rows = $results['scenarios']['framework']['rows'];
        self::assertCount(6, $rows);
        $seen = [];
        foreach ($rows as $row) {
            self::assertSame('ok', $row['status'], (string) $row['reason']);
            self::assertGreaterThan(0, $row['metrics']['rps'], json_encode($row['params']));
            // Every answer was a 200 (the scenario checks the body first); a socket error at the very
            // end of a short run on a loaded machine is wrk's business, not the bridges'.
            $errors = $row['metrics']['errors'];
            self::assertSame(0, $errors['non2xx'], json_encode($row['params']));
            self::assertLessThanOrEqual(max(1, intdiv((int) $row['metrics']['requests'], 100)), array_sum($errors), json_encode($row['params']) . ' ' . json_encode($errors));
            $seen[] = $row['params']['app'] . ' ' . $row['params']['mode'] . ' ' . ($row['params']['instances'] ?? '-');
            if ($row['params']['mode'] === 'coroutine') {
                // The two pool sizes of one app are measured together, in alternating rounds.
                self::assertSame(2, $row['metrics']['rounds'], json_encode($row['params']));
                self::assertStringContainsString('interleaved', implode(' ', $row['notes']));
            }
        }
        sort($seen);
        self::assertSame(['laravel coroutine 1', 'laravel coroutine 2', 'laravel fpm -', 'symfony coroutine 1', 'symfony coroutine 2', 'symfony fpm -'], $seen);
        $report = (string) file_get_contents("$this->out/report.md");
        self::assertStringContainsString('## framework', $report);
        self::assertMatchesRegularExpression('/symfony c=4 \(route \/\): fpm [\d,.]+ req\/s; coroutine \(1 inst\.\) [\d,.]+ req\/s \([\d.]+x fpm\)/', $report);
        self::assertStringContainsString('resident several times fpm', $report);
        self::assertMatchesRegularExpression('/symfony \/: coroutine with a pool of instances at least 0\.95x coroutine with one instance[^:]*: w=1 c=4: [\d,.]+ req\/s \(2 inst\.\) against [\d,.]+ \(1 inst\.\)/', $report);
    }

    public function testDatabaseRoutesWithAPoolOfInstancesAgainstSync(): void
    {
        $root = \dirname(__DIR__, 3);
        // One app (`--app`): the scenario treats both alike, and the hello test above runs both.
        $command = [PHP_BINARY, "$root/bin/weft", 'bench', 'framework', '--app', 'laravel', '--duration', '1', '--workers', '1',
            '--concurrency', '4', '--modes', 'sync,coroutine', '--routes', 'sleep,sql3', '--app-instances', '2', '--out', $this->out];
        $process = proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, $root, ['WEFT_TEST_MYSQL_URL' => getenv('WEFT_TEST_MYSQL_URL') ?: 'mysql://weft:weft@127.0.0.1:13306/weft'] + getenv());
        self::assertIsResource($process);
        $output = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        self::assertSame(0, proc_close($process), $output);

        $results = json_decode((string) file_get_contents("$this->out/results.json"), true);
        $rows = $results['scenarios']['framework']['rows'];
        $seen = [];
        foreach ($rows as $row) {
            $p = $row['params'];
            $name = "{$p['app']} {$p['route']} {$p['mode']} " . ($p['instances'] ?? '-') . (isset($p['phase']) ? " {$p['phase']}" : '');
            // Each row answered its check request (the body of /sleep, five rows from /sql3) before the load.
            self::assertSame('ok', $row['status'], $name . ': ' . $row['reason']);
            self::assertGreaterThan(0, $row['metrics']['rps'], $name);
            self::assertSame(0, $row['metrics']['errors']['non2xx'], $name);
            self::assertGreaterThan(0, $row['metrics']['worker_rss_bytes'], $name);
            self::assertArrayHasKey('wait_pct', $row['metrics'], $name);
            if ($p['mode'] === 'coroutine') {
                // Four connections, a pool of two: both instances booted, and what the second cost is reported.
                self::assertSame(2, $row['metrics']['instances_booted'], $name);
                self::assertGreaterThanOrEqual(0, $row['metrics']['instance_bytes'], $name);
            } else {
                self::assertNull($p['instances'], $name);
            }
            $seen[] = $name;
        }
        sort($seen);
        self::assertSame([
            'laravel sleep coroutine 2', 'laravel sleep sync -', 'laravel sql3 coroutine 2', 'laravel sql3 coroutine 2 paired', 'laravel sql3 sync -', 'laravel sql3 sync - paired',
        ], $seen);
        // The selection's chosen configurations ran again side by side, in alternating rounds (at least 3).
        foreach ($rows as $row) {
            if (($row['params']['phase'] ?? null) === 'paired') {
                self::assertGreaterThanOrEqual(3, \count($row['metrics']['round_rps']), json_encode($row['params']));
            }
        }

        // Every target of the run is judged from the figures (pass or fail is the machine's business),
        // unless a row it rests on was too short to judge (a short run on a loaded machine), which the
        // results then name.
        $claims = array_column($results['scenarios']['framework']['checks'], 'verdict', 'claim');
        $tooShort = array_filter($rows, static fn (array $row): bool => ($row['too_short'] ?? null) !== null);
        $verdicts = $tooShort === [] ? ['holds', 'does not hold'] : ['holds', 'does not hold', 'not evaluated'];
        self::assertSame([], array_filter(array_keys($claims), static fn (string $claim): bool => str_starts_with($claim, 'symfony')), 'only the app asked for');
        foreach (['laravel'] as $app) {
            foreach (["$app /sleep: coroutine with a pool at least 10x sync", "$app /sql3: coroutine (1 worker, a pool) at least as fast", "$app: memory per framework instance measured"] as $prefix) {
                $found = array_filter($claims, static fn (string $verdict, string $claim): bool => str_starts_with($claim, $prefix), ARRAY_FILTER_USE_BOTH);
                self::assertCount(1, $found, "$prefix: " . json_encode($claims));
                self::assertContains(current($found), $verdicts, $prefix);
            }
        }
        $report = (string) file_get_contents("$this->out/report.md");
        self::assertStringContainsString('| inst. |', $report);
        self::assertStringContainsString('MB/inst.', $report);
        self::assertMatchesRegularExpression('/laravel \/sql3: c=4: the selection chose coroutine \(1 worker, 2 instances, [\d,.]+ req\/s\) and sync \(1 worker, [\d,.]+ req\/s\); side by side, coroutine at [\d.]+x sync \(median of \d+ rounds\)/', $report);
    }

    public function testBenchAppSizesThePoolOfAFixtureApp(): void
    {
        $root = \dirname(__DIR__, 3);
        $url = getenv('WEFT_TEST_MYSQL_URL') ?: 'mysql://weft:weft@127.0.0.1:13306/weft';
        $base = [PHP_BINARY, "$root/bin/weft", 'bench', 'app', "$root/var/fixtures/laravel-app/weft.php", '--url', '/sleep', '--modes', 'coroutine',
            '--workers', '1', '--concurrency', '1,8', '--duration', '1', '--p99', '2s', '--json',
            '--env', 'DB_CONNECTION=mysql', '--env', "DB_URL=$url", '--env', 'APP_ENV=production', '--env', 'APP_DEBUG=0', '--env', 'WEFT_LEAK_WARNINGS=0', '--out', $this->out];

        $refused = proc_open([...$base, '--app-instances', '2,4'], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, $root);
        $said = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        self::assertSame(2, proc_close($refused), $said);
        self::assertStringContainsString("option '--app-instances' of bench app takes one number", $said);

        $process = proc_open([...$base, '--app-instances', '4'], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, $root);
        $json = stream_get_contents($pipes[1]);
        $log = stream_get_contents($pipes[2]);
        self::assertSame(0, proc_close($process), $log);
        $advice = json_decode($json, true)['recommendation'] ?? null;
        self::assertIsArray($advice, $json);
        $pool = $advice['app_instances'];
        // Eight connections on one worker, a pool of four: all four in use while the requests wait on MariaDB.
        self::assertSame(4, $pool['given']);
        self::assertSame(4, $pool['instances_in_use']);
        self::assertGreaterThan(0, $pool['worker_rss_start']);
        self::assertGreaterThanOrEqual($pool['worker_rss_start'], $pool['worker_rss_peak']);
        self::assertGreaterThanOrEqual(1, $pool['suggested']);
        self::assertStringContainsString('with `--app-instances 4`, a coroutine worker went from', implode("\n", $advice['reasons']));
        $results = json_decode((string) file_get_contents("$this->out/results.json"), true);
        foreach ($results['scenarios']['app']['rows'] as $row) {
            self::assertSame(4, $row['params']['instances'], json_encode($row['params']));
        }
    }
}
