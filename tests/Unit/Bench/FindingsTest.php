<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Bench;

use PHPUnit\Framework\TestCase;
use Weft\Bench\Report\Findings;
use Weft\Bench\Row;
use Weft\Bench\Scenario\HelloScenario;
use Weft\Bench\Scenario\LineScenario;
use Weft\Bench\Scenario\PreloadScenario;
use Weft\Bench\Scenario\SleepScenario;
use Weft\Bench\Scenario\Sql3Scenario;
use Weft\Bench\Scenario\UpstreamScenario;
use Weft\Bench\Settings;

/** Findings and "must show" checks computed from synthetic figures: the verdicts follow the numbers. */
final class FindingsTest extends TestCase
{
    /** @param array<string, mixed> $params @param array<string, mixed> $metrics */
    private static function row(string $scenario, array $params, array $metrics): Row
    {
        $row = new Row($scenario, $params);
        $row->metrics = $metrics + ['errors' => ['connect' => 0, 'read' => 0, 'write' => 0, 'timeout' => 0, 'non2xx' => 0]];
        $row->status = Row::OK;
        return $row;
    }

    /** @return list<Row> published-like sql3 figures: sync 50 workers collapses, coroutine stays flat */
    private static function sql3(float $coroutineAt500 = 824.0, float $coroutineMax = 180.0): array
    {
        $rows = [];
        $figures = [
            ['sync', 8, [100 => 839, 300 => 684, 500 => 689], 900.0],
            ['sync', 50, [100 => 771, 300 => 305, 500 => 379], 3100.0],
            ['coroutine', 8, [100 => 834, 300 => 838, 500 => $coroutineAt500], $coroutineMax],
        ];
        foreach ($figures as [$mode, $workers, $rates, $max]) {
            foreach ($rates as $c => $rps) {
                $rows[] = self::row('sql3', ['mode' => $mode, 'loop' => 'select', 'workers' => $workers, 'concurrency' => $c], ['rps' => (float) $rps, 'p99_ms' => $max / 2, 'max_ms' => $max, 'rss_bytes' => 50 << 20]);
            }
        }
        return $rows;
    }

    public function testBestWinnerAndFlatness(): void
    {
        $rows = self::sql3();
        self::assertSame(839.0, Findings::best($rows)->number('rps'));
        self::assertSame(305.0, Findings::worst($rows)->number('rps'));
        $winner = Findings::winner($rows, 'mode');
        self::assertStringStartsWith('sync was fastest with 839 req/s', $winner);
        self::assertStringContainsString("1.00x coroutine's best 838 req/s", $winner);
        self::assertEqualsWithDelta(824 / 838, Findings::flatness(Findings::ok($rows, ['mode' => 'coroutine'])), 1e-9);
        self::assertSame([100, 300, 500], Findings::values($rows, 'concurrency'));
    }

    public function testMoreWorkersThatHurtAreFound(): void
    {
        $hurts = Findings::workersHurt(self::sql3(), ['mode', 'loop', 'concurrency']);
        self::assertCount(2, $hurts, 'sync 8 -> 50 workers lost more than 10 % at c=300 and c=500 (at c=100 only 8 %)');
        self::assertSame(['group' => 'sync select c=300', 'from' => 8, 'to' => 50, 'fromRate' => 684.0, 'toRate' => 305.0], $hurts[0]);
        self::assertStringContainsString('sync select c=300: 8 → 50 workers went from 684 to 305 req/s (-55%)', Findings::describeHurts($hurts));
        self::assertSame('More workers never cost more than 10 % of the throughput.', Findings::describeHurts([]));
    }

    public function testCpuPerRequestComparesTheLowestOfEachMode(): void
    {
        $rows = [
            self::row('hello', ['mode' => 'fpm', 'workers' => 1, 'concurrency' => 100], ['rps' => 7000.0, 'cpu_us_per_req' => 126.0]),
            self::row('hello', ['mode' => 'sync', 'workers' => 1, 'concurrency' => 100], ['rps' => 99000.0, 'cpu_us_per_req' => 9.9]),
            self::row('hello', ['mode' => 'sync', 'workers' => 1, 'concurrency' => 1000], ['rps' => 67000.0, 'cpu_us_per_req' => 14.6]),
            self::row('hello', ['mode' => 'coroutine', 'workers' => 1, 'concurrency' => 100], ['rps' => 91000.0, 'cpu_us_per_req' => 10.8]),
        ];
        self::assertSame(
            'Server CPU time per request (all server processes; the lowest row of each mode): sync 9.9 µs, coroutine 10.8 µs, fpm 126.0 µs.',
            Findings::cpuPerRequest($rows),
        );
        self::assertNull(Findings::cpuPerRequest([]));
    }

    public function testSql3ChecksHoldOnThePublishedFigures(): void
    {
        $checks = (new Sql3Scenario(new Settings()))->checks(self::sql3());
        self::assertCount(4, $checks);
        [$flat, $tails, $fast, $apart] = $checks;
        self::assertTrue($flat->holds, $flat->evidence);
        self::assertTrue($tails->holds, $tails->evidence);
        self::assertStringContainsString('slowest sync request 3,100 ms', $tails->evidence);
        self::assertTrue($fast->holds, 'coroutine 834 is within 5 % of sync 839: ' . $fast->evidence);
        self::assertTrue($apart->holds);
    }

    public function testSql3ChecksFailWhenTheFiguresSaySo(): void
    {
        [$flat, $tails, $fast] = (new Sql3Scenario(new Settings()))->checks(self::sql3(coroutineAt500: 400.0, coroutineMax: 3500.0));
        self::assertFalse($flat->holds, '400 of 838 is not flat');
        self::assertFalse($tails->holds, 'a 3.5 s request is a multi-second tail');
        self::assertFalse($fast->holds, 'at c=500 coroutine 400 < sync 689');
    }

    public function testChecksWithoutFiguresAreNotEvaluated(): void
    {
        foreach ((new Sql3Scenario(new Settings()))->checks([]) as $check) {
            self::assertNull($check->holds);
            self::assertSame('not evaluated', $check->verdict());
        }
        $skipped = new Row('sql3', ['mode' => 'coroutine', 'workers' => 8, 'concurrency' => 100]);
        $skipped->skip('native extension not built');
        self::assertNull((new Sql3Scenario(new Settings()))->checks([$skipped])[0]->holds);
    }

    public function testSleepBounds(): void
    {
        $scenario = new SleepScenario(new Settings());
        $rows = [
            // coroutine at c=100: 9,500 of 10,000; at c=1000: CPU-bound at 98 % of its core.
            self::row('sleep', ['mode' => 'coroutine', 'loop' => 'select', 'workers' => 2, 'concurrency' => 100], ['rps' => 9500.0, 'cpu_pct' => 30.0]),
            self::row('sleep', ['mode' => 'coroutine', 'loop' => 'select', 'workers' => 2, 'concurrency' => 1000], ['rps' => 25000.0, 'cpu_pct' => 98.0]),
            self::row('sleep', ['mode' => 'sync', 'loop' => 'select', 'workers' => 2, 'concurrency' => 100], ['rps' => 195.0, 'cpu_pct' => 3.0]),
            self::row('sleep', ['mode' => 'sync', 'loop' => 'select', 'workers' => 8, 'concurrency' => 100], ['rps' => 190.0, 'cpu_pct' => 3.0]),
        ];
        [$coroutine, $sync] = $scenario->checks($rows);
        self::assertTrue($coroutine->holds, $coroutine->evidence);
        self::assertStringContainsString('c=1000 25,000 of 100,000 (25 %, CPU-bound)', $coroutine->evidence);
        self::assertFalse($sync->holds, '190 of the 800 req/s eight workers allow is not near: ' . $sync->evidence);
        $findings = \implode(' ', $scenario->findings($rows));
        self::assertStringContainsString('about 1.9 of its 8 workers were busy', $findings);
        self::assertStringContainsString('coroutine mode served more than sync mode with the same workers by: 2 worker(s) 49x', $findings);

        $idle = self::row('sleep', ['mode' => 'coroutine', 'loop' => 'select', 'workers' => 2, 'concurrency' => 1000], ['rps' => 25000.0, 'cpu_pct' => 40.0]);
        self::assertFalse($scenario->checks([$idle])[0]->holds, 'far from the bound with the CPU idle is not "near the CPU limit"');
    }

    public function testUpstreamBoundCountsOnlyWholeCycles(): void
    {
        $scenario = new UpstreamScenario(new Settings(quick: true));
        self::assertEqualsWithDelta(75.0, $scenario->bound(100, 1.0, 4.0), 1e-9, '4 s with a 1 s delay: the 4th answer comes after wrk stops');
        self::assertEqualsWithDelta(100 * 10 / 31, $scenario->bound(100, 3.0, 31.0), 1e-9);
        self::assertEqualsWithDelta(300 / 4.02, $scenario->bound(100, 1.0, 4.0, 4.02), 1e-9);

        $row = self::row('upstream', ['mode' => 'coroutine', 'loop' => 'select', 'workers' => 2, 'concurrency' => 100, 'delay' => 1.0], ['rps' => 74.6, 'bound_rps' => 75.0]);
        self::assertTrue($scenario->checks([$row])[0]->holds);
        $row->metrics['errors']['timeout'] = 3;
        self::assertFalse($scenario->checks([$row])[0]->holds, 'timeouts fail the check whatever the rate');
        $slow = self::row('upstream', ['mode' => 'coroutine', 'loop' => 'select', 'workers' => 2, 'concurrency' => 100, 'delay' => 1.0], ['rps' => 60.0, 'bound_rps' => 75.0]);
        self::assertFalse($scenario->checks([$slow])[0]->holds);
    }

    public function testPreloadLadder(): void
    {
        $rows = [];
        foreach (['fpm, no opcache' => ['fpm', 90.0], 'fpm + opcache' => ['fpm', 2600.0], 'fpm + opcache + preload' => ['fpm', 2700.0], 'sync' => ['sync', 50000.0], 'coroutine' => ['coroutine', 54000.0]] as $config => [$mode, $rps]) {
            $rows[] = self::row('preload', ['config' => $config, 'mode' => $mode, 'loop' => null, 'workers' => 2, 'concurrency' => 100], ['rps' => $rps, 'pss_bytes' => 40 << 20]);
        }
        [$ladder, $opcache, $preload, $resident] = (new PreloadScenario(new Settings()))->checks($rows);
        self::assertTrue($ladder->holds);
        self::assertTrue($opcache->holds, $opcache->evidence);
        self::assertTrue($preload->holds, '+3.8 % is more than the 3 % noise');
        self::assertTrue($resident->holds);
        $rows[2]->metrics['rps'] = 2610.0;
        self::assertFalse((new PreloadScenario(new Settings()))->checks($rows)[2]->holds, '+0.4 % is noise, not a gain');
        $findings = (new PreloadScenario(new Settings()))->findings($rows)[0];
        self::assertStringStartsWith('The ladder, best row of each configuration: fpm, no opcache 90.0 req/s', $findings);
    }

    public function testLineChecksAndLoopComparison(): void
    {
        $rows = [
            self::row('line', ['loop' => 'select', 'workers' => 1, 'pattern' => 'many'], ['rps' => 900.0, 'pss_per_process' => 8 << 20, 'errors' => ['connect' => 0, 'timeout' => 0, 'closed' => 0, 'mismatch' => 0]]),
            self::row('line', ['loop' => 'epoll', 'workers' => 1, 'pattern' => 'many'], ['rps' => 7000.0, 'pss_per_process' => 8 << 20, 'errors' => ['connect' => 0, 'timeout' => 2, 'closed' => 0, 'mismatch' => 0]]),
        ];
        [$errors, $measured, $where] = (new LineScenario(new Settings()))->checks($rows);
        self::assertFalse($errors->holds);
        self::assertStringContainsString('epoll w=1 many: timeout 2', $errors->evidence);
        self::assertTrue($measured->holds);
        self::assertSame('many 1 worker: epoll 7.8x', $where->evidence);
        self::assertSame('epoll against select (requests/s): w=1 many +678%.', HelloScenario::loops($rows));
    }
}
