<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Bench;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

/**
 * The bench rows of the extension's hooks (issue 10) end to end on tiny matrices: `sleep --app
 * weft,usleep`, `sql3 --app pdo` and the hook-overhead child of `bench core`, against real servers, wrk
 * and the shared MariaDB/Redis. Verdicts are checked against the rows of the same run, never against a
 * fixed speed: on a loaded machine the figures move, the consistency must not.
 */
final class HookBenchTest extends TestCase
{
    private string $out;

    protected function setUp(): void
    {
        if (!\is_file(\dirname(__DIR__, 3) . '/ext/modules/weft.so')) {
            self::markTestSkipped('the weft extension is not built (bash scripts/build-ext.sh)');
        }
        $this->out = \sys_get_temp_dir() . '/weft-bench-hooks-' . \getmypid() . '-' . \bin2hex(\random_bytes(3));
    }

    protected function tearDown(): void
    {
        if (isset($this->out)) {
            \exec('rm -rf ' . \escapeshellarg($this->out));
        }
    }

    private static function needsWrk(): void
    {
        foreach (\array_merge(\explode(':', (string) \getenv('PATH')), ['/usr/bin']) as $dir) {
            if ($dir !== '' && \is_executable("$dir/wrk")) {
                return;
            }
        }
        self::markTestSkipped('wrk is not installed (Debian package wrk)');
    }

    /**
     * Runs bin/weft ARGS to the end (bounded) and returns [exit code, stdout, stderr].
     *
     * @param list<string> $args
     * @return array{0: int, 1: string, 2: string}
     */
    private function weft(array $args, float $timeout): array
    {
        $root = \dirname(__DIR__, 3);
        $process = \proc_open([\PHP_BINARY, "$root/bin/weft", ...$args], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, $root);
        self::assertIsResource($process);
        \stream_set_blocking($pipes[1], false);
        \stream_set_blocking($pipes[2], false);
        $stdout = $stderr = '';
        $deadline = \microtime(true) + $timeout;
        while (($status = \proc_get_status($process))['running'] && \microtime(true) < $deadline) {
            $stdout .= (string) \stream_get_contents($pipes[1]);
            $stderr .= (string) \stream_get_contents($pipes[2]);
            \usleep(50_000);
        }
        if ($status['running']) {
            \posix_kill($status['pid'], \SIGINT);
            \usleep(3_000_000);
            \proc_terminate($process, \SIGKILL);
        }
        $stdout .= (string) \stream_get_contents($pipes[1]);
        $stderr .= (string) \stream_get_contents($pipes[2]);
        \proc_close($process);
        self::assertFalse($status['running'], "bin/weft did not finish within $timeout s: $stderr");
        return [$status['exitcode'], $stdout, $stderr];
    }

    /** @return array<string, mixed> the scenario's part of results.json */
    private function scenario(string $name): array
    {
        $results = \json_decode((string) \file_get_contents($this->out . '/results.json'), true);
        self::assertIsArray($results);
        self::assertTrue($results['complete']);
        return $results['scenarios'][$name];
    }

    public function testUsleepRowsSitNextToWeftSleepAndTheVerdictFollowsThem(): void
    {
        self::needsWrk();
        [$code, , $stderr] = $this->weft(['bench', 'sleep', '--app', 'weft,usleep', '--modes', 'coroutine', '--workers', '1', '--concurrency', '20', '--duration', '1', '--out', $this->out], 120);
        self::assertSame(0, $code, $stderr);
        $sleep = $this->scenario('sleep');
        $rps = [];
        foreach ($sleep['rows'] as $row) {
            self::assertSame('ok', $row['status'], (string) $row['reason']);
            self::assertSame(0, \array_sum($row['metrics']['errors']), 'every answer was "Hello World"');
            $rps[$row['params']['app']] = $row['metrics']['rps'];
        }
        \ksort($rps);
        self::assertSame(['usleep', 'weft'], \array_keys($rps), 'one row of each app');
        $check = \array_values(\array_filter($sleep['checks'], static fn (array $c): bool => \str_starts_with($c['claim'], 'usleep()')));
        self::assertCount(1, $check);
        self::assertSame($rps['usleep'] >= 0.9 * $rps['weft'], $check[0]['holds'], $check[0]['evidence']);
        // 20 connections each waiting 10 ms: a usleep() that blocked the one worker would allow 100 req/s.
        self::assertGreaterThan(150, $rps['usleep'], 'usleep() suspended the request instead of blocking the worker');
    }

    public function testSql3RunsThePlainPdoAppInEveryMode(): void
    {
        self::needsWrk();
        $modes = ['sync', 'coroutine'];
        $fpm = \is_executable('/usr/sbin/php-fpm8.2') && \is_executable('/usr/sbin/nginx');
        if ($fpm) {
            $modes[] = 'fpm';
        }
        [$code, , $stderr] = $this->weft(['bench', 'sql3', '--app', 'pdo', '--modes', \implode(',', $modes), '--workers', '2', '--concurrency', '10', '--duration', '1', '--out', $this->out], 180);
        self::assertSame(0, $code, $stderr);
        $sql3 = $this->scenario('sql3');
        self::assertCount(\count($modes), $sql3['rows']);
        foreach ($sql3['rows'] as $row) {
            self::assertSame('pdo', $row['params']['app']);
            self::assertSame('ok', $row['status'], (string) $row['reason']);
            self::assertGreaterThan(0, $row['metrics']['requests']);
        }
        $claims = \array_column($sql3['checks'], 'claim');
        self::assertNotEmpty($claims);
        foreach ($claims as $claim) {
            self::assertStringStartsWith('pdo app: ', $claim, 'the PDO rows are judged among themselves');
        }
    }

    public function testAnUnknownAppIsAUsageError(): void
    {
        [$code, , $stderr] = $this->weft(['bench', 'sleep', '--app', 'nope', '--out', $this->out], 30);
        self::assertNotSame(0, $code);
        self::assertStringContainsString("'--app' expects some of", $stderr);
    }

    /** @return iterable<string, array{0: string, 1: string}> */
    public static function clients(): iterable
    {
        yield 'PDO point selects' => ['hook-pdo', (string) (\getenv('WEFT_TEST_MYSQL_URL') ?: 'mysql://weft:weft@127.0.0.1:13306/weft')];
        yield 'phpredis GET' => ['hook-redis', (string) (\getenv('WEFT_TEST_REDIS_URL') ?: 'redis://127.0.0.1:16379')];
    }

    #[DataProvider('clients')]
    public function testHookOverheadChildReportsBothSidesOfOneRun(string $benchmark, string $url): void
    {
        $root = \dirname(__DIR__, 3);
        // With the extension loaded the way the bench loads it into its children.
        $process = \proc_open([\PHP_BINARY, '-d', "extension=$root/ext/modules/weft.so", "$root/bin/weft", 'bench', '_core', $benchmark, '--url', $url, '--count', '200', '--batches', '3'], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['file', $this->out . '.err', 'w']], $pipes, $root);
        self::assertIsResource($process);
        $stdout = (string) \stream_get_contents($pipes[1]);
        $code = \proc_close($process);
        $stderr = (string) @\file_get_contents($this->out . '.err');
        @\unlink($this->out . '.err');
        self::assertSame(0, $code, $stderr);
        $r = \json_decode(\trim($stdout), true);
        self::assertIsArray($r, $stdout);
        self::assertSame(600, $r['queries_per_side']);
        self::assertSame(3, $r['rounds']);
        self::assertGreaterThan(0, $r['hooks_on_qps']);
        self::assertGreaterThan(0, $r['hooks_off_qps']);
        self::assertEqualsWithDelta($r['hooks_on_qps'] / $r['hooks_off_qps'], $r['ratio_of_totals'], 1e-9);
        // The verdict is the median of the three rounds' own ratios: the middle one of them.
        self::assertCount(3, $r['round_ratios']);
        self::assertEqualsWithDelta($r['round_ratios'][1], $r['ratio'], 0.0006);
        self::assertGreaterThan(0, $r['cpu_us_per_query_on']);
        self::assertGreaterThan(0, $r['cpu_us_per_query_off']);
    }
}
