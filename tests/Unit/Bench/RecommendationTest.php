<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Bench;

use PHPUnit\Framework\TestCase;
use Weft\Bench\Report\Recommendation;
use Weft\Bench\Row;
use Weft\Bench\Scenario\AppScenario;
use Weft\Bench\Scenario\AppTarget;
use Weft\Bench\Settings;

/** The advice of `bench app` follows the figures it is given: synthetic rows in, the expected advice out. */
final class RecommendationTest extends TestCase
{
    /** @param array<string, mixed> $metrics */
    private static function row(string $mode, int $workers, int $c, array $metrics, string $loop = 'select'): Row
    {
        $row = new Row('app', ['mode' => $mode, 'loop' => $loop, 'workers' => $workers, 'concurrency' => $c]);
        $row->metrics = $metrics + [
            'errors' => ['connect' => 0, 'read' => 0, 'write' => 0, 'timeout' => 0, 'non2xx' => 0],
            'requests' => (int) (($metrics['rps'] ?? 0) * 2),
            'pss_bytes' => 20 << 20, 'rss_bytes' => 60 << 20, 'cpu_pct' => 30.0, 'cpu_us_per_req' => 100.0, 'p50_ms' => 5.0,
        ];
        $row->status = Row::OK;
        return $row;
    }

    /** @return list<Row> an app that waits ~10 ms per request: coroutine scales, sync is bounded by its workers */
    private static function waitingApp(): array
    {
        return [
            self::row('coroutine', 1, 1, ['rps' => 95.0, 'p50_ms' => 10.5, 'p99_ms' => 12.0, 'cpu_us_per_req' => 300.0, 'cpu_pct' => 3.0]),
            self::row('coroutine', 1, 16, ['rps' => 1500.0, 'p99_ms' => 15.0]),
            self::row('coroutine', 1, 128, ['rps' => 9000.0, 'p99_ms' => 30.0, 'cpu_pct' => 70.0, 'pss_bytes' => 22 << 20]),
            self::row('coroutine', 1, 512, ['rps' => 9300.0, 'p99_ms' => 150.0, 'cpu_pct' => 95.0]),
            self::row('sync', 4, 1, ['rps' => 94.0, 'p99_ms' => 12.0]),
            self::row('sync', 4, 16, ['rps' => 380.0, 'p99_ms' => 60.0]),
            self::row('sync', 4, 128, ['rps' => 385.0, 'p99_ms' => 1900.0]),
            self::row('sync', 16, 16, ['rps' => 1400.0, 'p99_ms' => 20.0, 'pss_bytes' => 60 << 20]),
            self::row('sync', 16, 128, ['rps' => 1500.0, 'p99_ms' => 400.0]),
        ];
    }

    public function testRecommendsTheFastestConfigurationUnderTheTarget(): void
    {
        $advice = Recommendation::compute(self::waitingApp(), 100.0, 1, '/srv/app.php');
        $data = $advice->toArray();
        // 9300 req/s at c=512 is faster but its p99 (150 ms) misses the target.
        self::assertSame('coroutine', $data['recommended']['mode']);
        self::assertSame(1, $data['recommended']['workers']);
        self::assertSame(128, $data['recommended']['concurrency']);
        self::assertSame(9000.0, $data['recommended']['rps']);
        // The knee: the first concurrency at >= 90 % of the configuration's peak (9300): 128.
        self::assertSame(128, $data['knee_concurrency']);
        self::assertSame(128, $data['max_concurrency_under_target']);
        self::assertSame(512, $data['first_concurrency_over_target']);
        // Alone: 95 req/s at concurrency 1 is 10.53 ms a request on average, 0.3 ms of it CPU.
        self::assertEqualsWithDelta(1 - 300 / (1e6 / 95), $data['alone']['wait_share'], 0.001);
        self::assertFalse($data['cpu_bound']);
        self::assertFalse($data['blocking']['suspected']);
        self::assertNull($data['modes']['sync']['workers_to_match'], 'no sync configuration came within 5 %');
        self::assertSame(1900.0, $data['modes']['sync']['worst_p99']['p99_ms']);
        self::assertStringContainsString('Coroutine mode, 1 worker: 9,000 req/s', $advice->headline);
        $text = \implode("\n", $advice->reasons);
        self::assertStringContainsString('waits about 97 %', $text);
        self::assertStringContainsString('Sync mode at best: 1,400 req/s under target with 16 workers', $text);
        self::assertStringContainsString('1.9 s', \str_replace('1,900', '1.9 s', $text));
        self::assertStringContainsString('## Recommendation for app.php', $advice->markdown(true));
    }

    public function testATieGoesToTheSmallerMemory(): void
    {
        $rows = [
            self::row('sync', 32, 64, ['rps' => 1000.0, 'p99_ms' => 50.0, 'pss_bytes' => 300 << 20]),
            self::row('coroutine', 2, 64, ['rps' => 980.0, 'p99_ms' => 40.0, 'pss_bytes' => 40 << 20]),
        ];
        $data = Recommendation::compute($rows, 100.0, 1, 'app.php')->toArray();
        self::assertSame('coroutine', $data['recommended']['mode'], '980 is within 5 % of 1000 and uses far less memory');
        $rows[1]->metrics['rps'] = 900.0;
        $data = Recommendation::compute($rows, 100.0, 1, 'app.php')->toArray();
        self::assertSame('sync', $data['recommended']['mode'], '900 is not within 5 %: the faster one wins');
    }

    public function testRowsWithErrorsOrWithoutLatencyAreNotCandidates(): void
    {
        $failing = self::row('sync', 8, 100, ['rps' => 5000.0, 'p99_ms' => 10.0]);
        $failing->metrics['errors']['non2xx'] = 50;
        $timedOut = self::row('sync', 8, 200, ['rps' => 6000.0, 'p99_ms' => null]);
        $good = self::row('coroutine', 1, 100, ['rps' => 3000.0, 'p99_ms' => 20.0]);
        $data = Recommendation::compute([$failing, $timedOut, $good], 100.0, 1, 'app.php')->toArray();
        self::assertSame('coroutine', $data['recommended']['mode']);
    }

    public function testNothingUnderTheTargetSaysSo(): void
    {
        $rows = [self::row('sync', 4, 100, ['rps' => 50.0, 'p99_ms' => 2500.0])];
        $advice = Recommendation::compute($rows, 100.0, 1, 'app.php');
        self::assertNull($advice->toArray()['recommended']);
        self::assertStringContainsString('No configuration kept p99 under 100 ms', $advice->headline);
        self::assertStringContainsString('2,500', $advice->headline);
    }

    public function testAPoolOfFrameworkInstancesIsSizedByItsMemoryAndTheLoad(): void
    {
        // `bench app --app-instances 50`: a coroutine worker at 56 MB with its first instance grows to
        // 81 MB at c=64 (50 instances in use): 0.5 MB each; a 128 MB memory_limit leaves room for 143.
        $rows = self::poolRows([[1, 45.0, 25.0, 56, null], [16, 700.0, 30.0, 64, null], [64, 900.0, 80.0, 81, null]]);
        $advice = Recommendation::compute($rows, 100.0, 1, 'weft.php', [], 128 << 20);
        $pool = $advice->toArray()['app_instances'];
        self::assertSame(50, $pool['given']);
        self::assertSame(50, $pool['instances_in_use']);
        self::assertSame((int) \round((25 << 20) / 49), $pool['per_instance_bytes']);
        self::assertSame(\intdiv((128 - 56) << 20, $pool['per_instance_bytes']), $pool['fit_by_memory']);
        // 900 req/s x 22 ms (a request alone: 1 / 45 req/s) = 20 requests in the framework at once, not all 64 connections.
        self::assertSame(20, $pool['suggested']);
        self::assertStringContainsString('with `--app-instances 50`, a coroutine worker went from 56.0 MB (one instance, at its start) to 81.0 MB', \implode("\n", $advice->reasons));

        // A tight memory_limit bounds the pool below the load.
        self::assertSame(15, Recommendation::pool($rows, $rows[2], false, 64 << 20)['data']['suggested'], '8 MB left under the limit, 0.51 MB an instance');
        self::assertSame(128 << 20, Recommendation::bytes('128M'));
        self::assertSame(-1, Recommendation::bytes('-1'));
        self::assertNull(Recommendation::bytes('lots'));
    }

    public function testThePoolsMemoryIsReadAgainstTheInstancesTheWorkersReportBooted(): void
    {
        // The same load, but the workers said how many instances they booted: 25 at c=64 (a worker boots
        // one only when a request finds all busy), so the 25 MB it grew are 25 / 24 MB an instance, not 25 / 49.
        $rows = self::poolRows([[1, 45.0, 25.0, 56, 1], [16, 700.0, 30.0, 64, 9], [64, 900.0, 80.0, 81, 25]]);
        $advice = Recommendation::compute($rows, 100.0, 1, 'weft.php', [], 128 << 20);
        $pool = $advice->toArray()['app_instances'];
        self::assertSame(25, $pool['instances_in_use']);
        self::assertSame((int) \round((25 << 20) / 24), $pool['per_instance_bytes']);
        self::assertStringContainsString('(concurrency 64 over 1 worker: 25 instances booted)', \implode("\n", $advice->reasons));
    }

    /**
     * `bench app --app-instances 50` rows of one coroutine worker starting at 56 MB.
     *
     * @param list<array{int, float, float, int, ?int}> $loads concurrency, req/s, p99 ms, worker MB after, instances booted (null: not reported)
     * @return list<Row>
     */
    private static function poolRows(array $loads): array
    {
        $rows = [];
        foreach ($loads as [$c, $rps, $p99, $mb, $booted]) {
            $metrics = ['rps' => $rps, 'p50_ms' => 22.0, 'p99_ms' => $p99, 'cpu_pct' => 60.0, 'worker_rss_start' => 56 << 20, 'worker_rss_bytes' => $mb << 20];
            if ($booted !== null) {
                $metrics['instances_booted'] = $booted;
            }
            $row = self::row('coroutine', 1, $c, $metrics);
            $pool = new Row('app', $row->params + ['instances' => 50]);
            $pool->metrics = $row->metrics;
            $pool->status = Row::OK;
            $rows[] = $pool;
        }
        return $rows;
    }

    public function testBlockingInCoroutineModeIsDetectedFromTheRows(): void
    {
        // 20 ms per request alone; at c=64 one worker still serves ~50 req/s with the CPU idle: one at a time.
        $rows = [
            self::row('coroutine', 1, 1, ['rps' => 49.0, 'p50_ms' => 20.3, 'p99_ms' => 21.0, 'cpu_pct' => 1.0]),
            self::row('coroutine', 1, 16, ['rps' => 49.5, 'p99_ms' => 330.0, 'cpu_pct' => 1.5]),
            self::row('coroutine', 1, 64, ['rps' => 49.6, 'p99_ms' => 1300.0, 'cpu_pct' => 1.5]),
            self::row('sync', 16, 16, ['rps' => 780.0, 'p99_ms' => 22.0, 'cpu_pct' => 10.0]),
        ];
        $advice = Recommendation::compute($rows, 100.0, 1, 'app.php');
        $data = $advice->toArray();
        self::assertTrue($data['blocking']['suspected']);
        self::assertStringContainsString('about 1.0 request(s) were in progress at a time', $data['blocking']['evidence'][0]);
        self::assertStringContainsString('never served more than 49.6 req/s', $data['blocking']['evidence'][0]);
        self::assertSame('sync', $data['recommended']['mode']);
        self::assertStringContainsString('Coroutine mode blocks', \implode("\n", $advice->reasons));
        // A bridge app with one framework instance per worker looks the same: the advice says how to give it more.
        self::assertStringContainsString('measure again with `bench app ... --app-instances N`', \implode("\n", $advice->reasons));

        // The same figures with the CPU saturated are a CPU-bound app, not a blocking one.
        foreach ($rows as $row) {
            $row->metrics['cpu_pct'] = 99.0;
        }
        self::assertFalse(Recommendation::blocking($rows, 1)['suspected']);
    }

    public function testASaturatedDatabaseIsNotBlocking(): void
    {
        // The sql3 shape on a busy machine: the worker ran several requests at once at c=16 (6,480 req/s
        // against 1,749 alone), then the database capped throughput with the server's CPU idle.
        $rows = [
            self::row('coroutine', 1, 1, ['rps' => 1749.0, 'p99_ms' => 5.5, 'cpu_pct' => 36.0]),
            self::row('coroutine', 1, 16, ['rps' => 6480.0, 'p99_ms' => 8.3, 'cpu_pct' => 52.5]),
            self::row('coroutine', 1, 64, ['rps' => 3421.0, 'p99_ms' => 43.1, 'cpu_pct' => 39.3]),
            self::row('coroutine', 1, 256, ['rps' => 3028.0, 'p99_ms' => 163.0, 'cpu_pct' => 36.3]),
        ];
        $advice = Recommendation::compute($rows, 100.0, 1, 'sql3.php');
        self::assertFalse($advice->toArray()['blocking']['suspected']);
        self::assertStringContainsString('something outside the server set the pace', \implode("\n", $advice->reasons));
    }

    public function testTheDetectorsLogLinesCountAsEvidence(): void
    {
        $log = "2026-11-23 weft: worker 123 started\n"
            . "weft: coroutine blocked 52 ms in PDO::query() (no hook for this call)\n"
            . "weft: coroutine blocked 12 ms in usleep()\n"
            . "weft: blocked 40 ms in PDO::query()\n"
            . "weft: the loop uses non-blocking sockets\n";
        self::assertSame(['PDO::query' => 2, 'usleep' => 1], AppScenario::blockedCalls($log));

        $row = self::row('coroutine', 1, 16, ['rps' => 3000.0, 'p99_ms' => 20.0, 'cpu_pct' => 90.0]);
        $row->metrics['blocked'] = ['PDO::query' => 2];
        $data = Recommendation::compute([$row], 100.0, 1, 'app.php')->toArray();
        self::assertTrue($data['blocking']['suspected']);
        self::assertSame(['PDO::query' => 2], $data['blocking']['calls']);
    }

    public function testTheClimbStopsAtTheKneeOrWhenLatencyGoesBad(): void
    {
        $scenario = new AppScenario(new Settings(quick: true), new AppTarget('/srv/app.php'));
        $r1 = self::row('coroutine', 1, 1, ['rps' => 100.0, 'p99_ms' => 5.0]);
        $r16 = self::row('coroutine', 1, 16, ['rps' => 1500.0, 'p99_ms' => 12.0]);
        self::assertSame(16, $scenario->nextStep([$r1]));
        self::assertSame(128, $scenario->nextStep([$r1, $r16]));
        // No gain and p99 past the target: the knee is behind us.
        $flat = self::row('coroutine', 1, 128, ['rps' => 1520.0, 'p99_ms' => 120.0]);
        self::assertNull($scenario->nextStep([$r1, $r16, $flat]));
        // Far past the target: stop even while throughput still rises.
        $bad = self::row('coroutine', 1, 128, ['rps' => 3000.0, 'p99_ms' => 450.0]);
        self::assertNull($scenario->nextStep([$r1, $r16, $bad]));
        // Errors: stop.
        $errors = self::row('coroutine', 1, 128, ['rps' => 3000.0, 'p99_ms' => 20.0]);
        $errors->metrics['errors']['read'] = 500;
        self::assertNull($scenario->nextStep([$r1, $r16, $errors]));
        // The top of the ladder: stop.
        $top = self::row('coroutine', 1, 512, ['rps' => 9000.0, 'p99_ms' => 20.0]);
        self::assertNull($scenario->nextStep([$r1, $r16, $top]));
    }

    public function testTheRequestMixScriptCarriesTheValuesAsGiven(): void
    {
        $target = new AppTarget('/srv/app.php', ['/a', '/b?x=]]1'], 'POST', "{\"k\": \"]=]\"}\n", ['X-Token' => 'abc']);
        self::assertTrue($target->needsScript());
        $lua = $target->wrkScript();
        self::assertStringContainsString("[[\n/a]]", $lua);
        self::assertStringContainsString("[=[\n/b?x=]]1]=]", $lua);
        self::assertStringContainsString("[[\n{\"k\": \"]=]\"}\n]]", $lua);
        self::assertStringContainsString("headers[ [[\nX-Token]] ] = [[\nabc]]", $lua);
        self::assertStringContainsString("[==[\n]]x]=]]==]", (new AppTarget('/srv/app.php', ['/'], 'POST', ']]x]=]'))->wrkScript());
        self::assertFalse((new AppTarget('/srv/app.php'))->needsScript());
        $this->expectException(\InvalidArgumentException::class);
        new AppTarget('/srv/app.php', ['no-slash']);
    }

    public function testNoRowSaysWhyNot(): void
    {
        $broken = new Row('app', ['mode' => 'coroutine', 'loop' => 'epoll', 'workers' => 1, 'concurrency' => 1]);
        $broken->fail('server did not start: the application could not be loaded: Unclosed \'(\' on line 2 (at /srv/app.php:3)');
        $same = new Row('app', ['mode' => 'sync', 'loop' => 'epoll', 'workers' => 4, 'concurrency' => 1]);
        $same->fail((string) $broken->reason);
        $skipped = new Row('app', ['mode' => 'sync', 'loop' => 'epoll', 'workers' => 16, 'concurrency' => 1]);
        $skipped->skip('not run');
        $advice = Recommendation::compute([$broken, $same, $skipped], 100.0, 1, 'app.php');
        $data = $advice->toArray();
        self::assertSame(0, $data['rows_measured']);
        self::assertNull($data['recommended']);
        self::assertSame($advice->headline, $data['headline'], 'the JSON carries the headline too');
        self::assertSame(['coroutine epoll w=1 c=1: ' . $broken->reason], $advice->reasons, 'the cause, once');
        self::assertStringContainsString('could not be loaded', $advice->text());

        $interrupted = new Row('app', ['mode' => 'sync', 'loop' => 'epoll', 'workers' => 64, 'concurrency' => 128]);
        $interrupted->skip('interrupted');
        self::assertSame(['sync epoll w=64 c=128: skipped: interrupted'], Recommendation::compute([$interrupted], 100.0, 1, 'app.php')->reasons);
    }

    public function testAnAppThatFailsRequestsIsToldToFixThemNotToRaiseTheTarget(): void
    {
        // Fast, low p99, but one request in ten is a 500: the failures are the finding, not the latency.
        $rows = [];
        foreach ([['coroutine', 1], ['sync', 4], ['sync', 16]] as $i => [$mode, $workers]) {
            $row = self::row($mode, $workers, 1, ['rps' => 11000.0, 'p99_ms' => 1.2]);
            $row->metrics['errors']['non2xx'] = 2200 + 100 * $i;
            $row->metrics['log'] = ['errors' => 2200 + 100 * $i, 'first_error' => 'GET /: RuntimeException: boom (at /srv/app.php:6)', 'worker_exits' => 0, 'first_exit' => null];
            $rows[] = $row;
        }
        $advice = Recommendation::compute($rows, 100.0, 1, 'app.php');
        self::assertNull($advice->toArray()['recommended']);
        self::assertStringStartsWith('No configuration served without errors: even the best, coroutine select w=1 c=1, failed 9.1 % of its requests (answers outside 2xx/3xx 2,200)', $advice->headline);
        $text = \implode("\n", $advice->reasons);
        self::assertStringNotContainsString('Raise --p99', $text);
        self::assertStringContainsString('Fix the failures before tuning', $text);
        self::assertStringContainsString('The server logged 6,900 error line(s) (each uncaught exception among them is a failed request) in 3 row(s)', $text);
        self::assertStringContainsString('the first: GET /: RuntimeException: boom (at /srv/app.php:6)', $text);
        self::assertStringContainsString('coroutine mode ran at one concurrency level only', $text, 'one level cannot show blocking either way');
        self::assertStringNotContainsString('No sign that the app blocks', $text);
    }

    public function testALevelPastTheRangeThatFailedRequestsIsNotDescribedByItsP99(): void
    {
        $timeouts = self::row('coroutine', 1, 512, ['rps' => 2000.0, 'p99_ms' => 40.0]);
        $timeouts->metrics['errors']['timeout'] = 300;
        $rows = [
            self::row('coroutine', 1, 1, ['rps' => 500.0, 'p99_ms' => 3.0]),
            self::row('coroutine', 1, 64, ['rps' => 3000.0, 'p99_ms' => 30.0]),
            $timeouts,
        ];
        $advice = Recommendation::compute($rows, 100.0, 1, 'app.php');
        self::assertSame(512, $advice->toArray()['first_concurrency_over_target']);
        $text = \implode("\n", $advice->reasons);
        self::assertStringContainsString('it stayed under 100 ms without errors up to concurrency 64; at 512, 7.0 % of its requests failed (timeout 300)', $text);
        self::assertStringNotContainsString('was 40.0 ms at 512', $text, 'a p99 under the target is not why that level is out');
    }

    public function testTheServerLogSaysWhatFailed(): void
    {
        $log = "2026-11-23T10:58:57.417+00:00 [master 3861] info: Weft listening on 127.0.0.1:44933\n"
            . "2026-11-23T10:58:57.452+00:00 [worker 3863] error: GET /: RuntimeException: boom 10\n  at /srv/app.php:6\n  (+25 frame(s) in Weft)\n"
            . "2026-11-23T10:58:57.454+00:00 [worker 3863] error: GET /: RuntimeException: boom 20\n  at /srv/app.php:6\n"
            . "2026-11-23T10:58:58.101+00:00 [master 3861] warning: Worker 1 (pid 3863) exited with code 1 after 0.6 s; restarting in 0.1 s\n"
            . "2026-11-23T10:58:58.301+00:00 [master 3861] warning: Worker 1 (pid 3870) killed by signal 9 after 0.1 s; restarting in 0.2 s\n"
            . "2026-11-23T10:58:59.000+00:00 [master 3861] info: Worker 1 (pid 3872) exited with code 0\n";
        self::assertSame(
            ['errors' => 2, 'first_error' => 'GET /: RuntimeException: boom 10 (at /srv/app.php:6)', 'worker_exits' => 2, 'first_exit' => 'exited with code 1 after 0.6 s'],
            AppScenario::logProblems($log),
        );
        self::assertSame(['errors' => 0, 'first_error' => null, 'worker_exits' => 0, 'first_exit' => null], AppScenario::logProblems(''));
    }

    public function testACpuHeavyRequestThatRunsOneAtATimeIsNotBlocking(): void
    {
        // A 2 MB answer: 0.56 ms of server CPU in a 0.72 ms request alone; at c=128 the reader, not the
        // server, sets the pace (CPU 48 %), so about one request is in progress at a time without any block.
        $rows = [
            self::row('coroutine', 1, 1, ['rps' => 1392.0, 'p99_ms' => 2.1, 'cpu_us_per_req' => 558.7, 'cpu_pct' => 75.8]),
            self::row('coroutine', 1, 16, ['rps' => 1211.0, 'p99_ms' => 37.0, 'cpu_us_per_req' => 468.9, 'cpu_pct' => 56.1]),
            self::row('coroutine', 1, 128, ['rps' => 1009.0, 'p99_ms' => 510.0, 'cpu_us_per_req' => 492.1, 'cpu_pct' => 48.5]),
        ];
        $advice = Recommendation::compute($rows, 100.0, 1, 'large.php');
        self::assertFalse($advice->toArray()['blocking']['suspected']);
        self::assertTrue($advice->toArray()['cpu_bound']);
        self::assertStringNotContainsString('Coroutine mode blocks', \implode("\n", $advice->reasons), 'CPU-bound and blocking at once would contradict itself');

        // The same shape with a request that waits 20 ms alone is blocking, and every piece of evidence reads as a sentence.
        $blocking = [
            self::row('coroutine', 1, 1, ['rps' => 49.0, 'p99_ms' => 21.0, 'cpu_pct' => 1.0]),
            self::row('coroutine', 1, 64, ['rps' => 49.6, 'p99_ms' => 1300.0, 'cpu_pct' => 1.5]),
        ];
        $blocking[1]->metrics['blocked'] = ['pcntl_sigtimedwait' => 2];
        $text = \implode("\n", Recommendation::compute($blocking, 100.0, 1, 'app.php')->reasons);
        self::assertStringContainsString('Coroutine mode blocks: the server logged 2 "blocked" line(s)', $text);
        self::assertStringContainsString('(pcntl_sigtimedwait ×2). With 1 worker it never served', $text);
    }

    public function testWithBothLoopsTheHeadlineNamesTheLoopAndAloneIsOfTheRecommendedOne(): void
    {
        $select = self::row('coroutine', 1, 1, ['rps' => 5000.0, 'p99_ms' => 3.0, 'cpu_us_per_req' => 60.0]);
        $epoll = [
            self::row('coroutine', 1, 1, ['rps' => 10000.0, 'p99_ms' => 2.0, 'cpu_us_per_req' => 40.0], 'epoll'),
            self::row('coroutine', 1, 16, ['rps' => 40000.0, 'p99_ms' => 4.0], 'epoll'),
        ];
        $advice = Recommendation::compute([$select, ...$epoll], 100.0, 1, 'app.php');
        self::assertStringStartsWith('Coroutine mode (epoll loop), 1 worker: 40,000 req/s', $advice->headline);
        self::assertSame('coroutine epoll w=1 c=1', $advice->toArray()['alone']['label']);
        // One loop: nothing to tell apart, so the headline does not name it.
        self::assertStringStartsWith('Coroutine mode, 1 worker', Recommendation::compute($epoll, 100.0, 1, 'app.php')->headline);
    }

    public function testAConfigurationStillRisingAtItsLastLevelHasNoKnee(): void
    {
        // A 50 ms upstream: requests/s grow with concurrency all the way up the ladder; p99 passes the
        // target on the way. Neither "saturates at 512" nor "something outside set the pace" holds.
        $rows = [
            self::row('coroutine', 1, 1, ['rps' => 19.0, 'p99_ms' => 54.7, 'cpu_pct' => 2.0, 'cpu_us_per_req' => 1050.0]),
            self::row('coroutine', 1, 16, ['rps' => 292.0, 'p99_ms' => 67.1, 'cpu_pct' => 9.7]),
            self::row('coroutine', 1, 128, ['rps' => 2149.0, 'p99_ms' => 128.0, 'cpu_pct' => 36.0]),
            self::row('coroutine', 1, 512, ['rps' => 3156.0, 'p99_ms' => 359.0, 'cpu_pct' => 49.9]),
        ];
        $advice = Recommendation::compute($rows, 100.0, 1, 'upstream.php');
        $data = $advice->toArray();
        self::assertSame(16, $data['recommended']['concurrency']);
        self::assertNull($data['knee_concurrency']);
        $text = \implode("\n", $advice->reasons);
        self::assertStringContainsString('It had not saturated at concurrency 512, the highest level measured for it (requests/s still rose 47 % from concurrency 128)', $text);
        self::assertStringNotContainsString('saturates at', $text);
        self::assertStringNotContainsString('something outside the server set the pace', $text);

        // The same climb with the CPU saturated at the last level: that level is where it saturates.
        $rows[3]->metrics['cpu_pct'] = 96.0;
        $rows[2]->metrics['p99_ms'] = 90.0;
        $cpu = Recommendation::compute($rows, 100.0, 1, 'upstream.php');
        self::assertSame(512, $cpu->toArray()['knee_concurrency']);
        self::assertStringNotContainsString('had not saturated', \implode("\n", $cpu->reasons));

        // One level only: nothing to say about where it saturates.
        $one = Recommendation::compute([self::row('coroutine', 1, 16, ['rps' => 292.0, 'p99_ms' => 67.1])], 100.0, 1, 'upstream.php');
        self::assertNull($one->toArray()['knee_concurrency']);
        self::assertStringContainsString('Only concurrency 16 was measured for it, so where it saturates is not known', \implode("\n", $one->reasons));
    }
}
