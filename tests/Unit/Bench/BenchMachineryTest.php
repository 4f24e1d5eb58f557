<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Bench;

use PHPUnit\Framework\TestCase;
use Weft\Bench\Environment;
use Weft\Bench\Machine;
use Weft\Bench\Report\Chart;
use Weft\Bench\Report\Comparison;
use Weft\Bench\Report\Findings;
use Weft\Bench\Report\SvgChart;
use Weft\Bench\Row;
use Weft\Bench\Settings;
use Weft\Bench\Tools;

/** The shared machinery around the scenarios: findings hygiene, bar charts, build ratios, ports, layering. */
final class BenchMachineryTest extends TestCase
{
    /** @param array<string, mixed> $params */
    private static function row(array $params, float $rps, array $extra = []): Row
    {
        $row = new Row('hello', $params);
        $row->metrics = ['rps' => $rps, 'errors' => []] + $extra;
        $row->status = Row::OK;
        return $row;
    }

    public function testNoWorkersSentenceWithoutTwoWorkerCountsToCompare(): void
    {
        $oneWorker = [
            self::row(['mode' => 'sync', 'workers' => 1, 'concurrency' => 100], 1000.0),
            self::row(['mode' => 'coroutine', 'workers' => 1, 'concurrency' => 100], 1200.0),
        ];
        self::assertNull(Findings::workersLine($oneWorker, ['mode', 'concurrency']));
        $two = [...$oneWorker, self::row(['mode' => 'sync', 'workers' => 2, 'concurrency' => 100], 1050.0)];
        self::assertSame('More workers never cost more than 10 % of the throughput.', Findings::workersLine($two, ['mode', 'concurrency']));
        $two[] = self::row(['mode' => 'coroutine', 'workers' => 2, 'concurrency' => 100], 600.0);
        self::assertStringStartsWith('More workers hurt in 1 place(s): coroutine c=100: 1 → 2 workers', (string) Findings::workersLine($two, ['mode', 'concurrency']));
    }

    public function testPerConcurrencyWinnersDoNotRepeatTheOverallOne(): void
    {
        $rows = [
            self::row(['mode' => 'sync', 'workers' => 1, 'concurrency' => 100], 1000.0),
            self::row(['mode' => 'coroutine', 'workers' => 1, 'concurrency' => 100], 1200.0),
            self::row(['mode' => 'sync', 'workers' => 1, 'concurrency' => 1000], 800.0),
            self::row(['mode' => 'coroutine', 'workers' => 1, 'concurrency' => 1000], 1100.0),
        ];
        $lines = Findings::winnersByConcurrency($rows);
        self::assertSame(['By concurrency (the best row of each mode; ratio to the fastest): c=100: coroutine 1,200, sync 1,000 (0.83x); c=1000: coroutine 1,100, sync 800 (0.73x).'], $lines);
        self::assertStringNotContainsString('was fastest', $lines[0], 'the overall winner sentence is not repeated per level');
        self::assertSame([], Findings::winnersByConcurrency(\array_slice($rows, 0, 2)), 'one concurrency: nothing beyond the overall line');
        self::assertSame(['a.', 'b.'], Findings::tidy(['a.', null, '', 'b.', 'a.']));
    }

    public function testBarChartsGiveEverySeriesItsOwnBar(): void
    {
        $rows = [];
        foreach (['sync select', 'sync epoll', 'coroutine select', 'coroutine epoll'] as $i => $series) {
            [$mode, $loop] = \explode(' ', $series);
            foreach ([100, 1000] as $c) {
                $rows[] = self::row(['mode' => $mode, 'loop' => $loop, 'workers' => 1, 'concurrency' => $c], 50000.0 + $i * 100);
            }
        }
        $chart = new Chart('hello-rps.svg', 'hello', 'concurrency', 'concurrent connections', 'rps', 'requests/s', ['mode', 'loop', 'workers'], Chart::BARS);
        $dom = new \DOMDocument();
        self::assertTrue($dom->loadXML(SvgChart::render($chart, $rows)));
        $bars = [];
        foreach ($dom->getElementsByTagName('rect') as $rect) {
            if ($rect->getElementsByTagName('title')->length === 1) {
                $bars[] = [(float) $rect->getAttribute('x'), (float) $rect->getAttribute('width')];
            }
        }
        self::assertCount(8, $bars, 'one bar per series and concurrency');
        \usort($bars, static fn (array $a, array $b): int => $a[0] <=> $b[0]);
        for ($i = 1; $i < \count($bars); $i++) {
            self::assertGreaterThanOrEqual($bars[$i - 1][0] + $bars[$i - 1][1], $bars[$i][0], 'bars never overlap');
        }
        self::assertSame(0, $dom->getElementsByTagName('polyline')->length);
    }

    public function testComparisonPairsRowsOfBothBuildsAsRatios(): void
    {
        $params = ['mode' => 'coroutine', 'loop' => 'select', 'workers' => 1, 'concurrency' => 100];
        $rows = [
            self::row($params + ['build' => 'this'], 12000.0, ['p99_ms' => 10.0, 'cpu_us_per_req' => 8.0, 'pss_bytes' => 30 << 20]),
            self::row($params + ['build' => '4f651f4'], 8000.0, ['p99_ms' => 20.0, 'cpu_us_per_req' => 13.0, 'pss_bytes' => 30 << 20]),
            self::row(['concurrency' => 1000] + $params + ['build' => 'this'], 9000.0),
        ];
        $pairs = Comparison::pairs($rows, '4f651f4');
        self::assertCount(1, $pairs, 'a row without its baseline twin is not a pair');
        self::assertSame(1.5, $pairs[0]['ratio']['rps']);
        self::assertSame(0.5, $pairs[0]['ratio']['p99_ms']);
        self::assertSame(0.615, $pairs[0]['ratio']['cpu_us_per_req']);
        $markdown = Comparison::markdown($rows, '4f651f4');
        self::assertStringContainsString('| coroutine select 1 worker c=100 | 1.50x | 0.50x | 0.61x | 1.00x | 12,000 / 8,000 |', $markdown);
    }

    public function testPortRangeHandsOutFreePortsOfTheRangeOnly(): void
    {
        // Two adjacent free ports, the first held busy (other tests and engineers use ports too: search).
        $busy = false;
        for ($try = 0; $try < 50 && $busy === false; $try++) {
            $port = \random_int(20000, 30000);
            $busy = @\stream_socket_server("tcp://127.0.0.1:$port", $errno, $error);
            $next = @\stream_socket_server('tcp://127.0.0.1:' . ($port + 1), $errno, $error);
            if ($next === false && $busy !== false) {
                \fclose($busy);
                $busy = false;
            }
            if ($next !== false) {
                \fclose($next);
            }
        }
        self::assertNotFalse($busy, 'found two adjacent free ports');
        $out = \sys_get_temp_dir() . '/weft-bench-port-' . \getmypid();
        $env = new Environment(\dirname(__DIR__, 3), $out, new Settings(portRange: [$port, $port + 1]), Tools::detect(), Machine::detect());
        try {
            // $port is taken: the range's other port, then again (round-robin), never one outside.
            self::assertSame($port + 1, $env->port());
            self::assertSame($port + 1, $env->port());
            \fclose($busy);
            self::assertSame($port, $env->port());
            $hold = \stream_socket_server('tcp://127.0.0.1:' . ($port + 1));
            $hold2 = @\stream_socket_server("tcp://127.0.0.1:$port");
            if ($hold !== false && $hold2 !== false) {
                try {
                    $env->port();
                    self::fail('a full range must be an error');
                } catch (\RuntimeException $e) {
                    self::assertStringContainsString("no free port left in --port-range $port-" . ($port + 1), $e->getMessage());
                }
            }
            self::assertSame(0, (new Environment(\dirname(__DIR__, 3), $out, new Settings(), Tools::detect(), Machine::detect()))->port());
        } finally {
            @\rmdir("$out/logs");
            @\rmdir($out);
        }
    }

    /** A baseline row's server loads the baseline's extension; the load client (this checkout's bin/weft) this checkout's. */
    public function testTheLoadClientsKeepThisCheckoutsExtensionWhileABaselineServes(): void
    {
        $root = \dirname(__DIR__, 3);
        $other = \sys_get_temp_dir() . '/weft-bench-build-' . \getmypid();
        $out = "$other-out";
        \mkdir("$other/ext/modules", 0777, true);
        \touch("$other/ext/modules/weft.so");
        try {
            $env = new Environment($root, $out, new Settings(), Tools::detect(), Machine::detect());
            $env->useBuild(new \Weft\Bench\Build('other', $other, null));
            self::assertContains("extension=$other/ext/modules/weft.so", $env->phpFlags(), 'the server: the build\'s');
            $client = $env->clientPhpFlags();
            self::assertNotContains("extension=$other/ext/modules/weft.so", $client);
            self::assertSame(\is_file("$root/ext/modules/weft.so"), \in_array("extension=$root/ext/modules/weft.so", $client, true), 'the client: this checkout\'s');
            self::assertSame(\array_slice($env->phpFlags(), 0, 6), \array_slice($client, 0, 6), 'the same JIT flags');
        } finally {
            @\unlink("$other/ext/modules/weft.so");
            @\rmdir("$other/ext/modules");
            @\rmdir("$other/ext");
            @\rmdir($other);
            @\rmdir("$out/logs");
            @\rmdir($out);
        }
    }

    public function testAServerWhoseAppCannotLoadIsKnownDoomedFromItsLog(): void
    {
        $master = "2026-11-23T10:59:20.903+00:00 [master 4847] info: Weft listening on 127.0.0.1:41915: 1 coroutine worker(s)\n";
        self::assertNull(Environment::bootFailure($master), 'a server that is still starting is not doomed');
        $parse = $master . "2026-11-23T10:59:20.910+00:00 [worker 4849] critical: Worker could not load the application: Unclosed '(' on line 2\n"
            . "  at /srv/app.php:3\n  (+10 frame(s) in Weft)\n";
        self::assertSame("the application could not be loaded: Unclosed '(' on line 2 (at /srv/app.php:3)", Environment::bootFailure($parse));

        $fpm = "2026-11-23T11:15:23.080+00:00 [fpm worker 8072] error: Cannot load the application: ParseError: Unclosed '(' on line 2\n  at /srv/app.php:3\n";
        self::assertSame("the application could not be loaded: ParseError: Unclosed '(' on line 2 (at /srv/app.php:3)", Environment::bootFailure($fpm));

        $fpmExit = "2026-11-23T11:30:00.000+00:00 [master 7521] warning: The readiness request loads the application and expects \"pong\", but got status 200 with 0 byte(s): does the application file call exit() or die() when it is loaded?\n";
        self::assertSame('the application could not be loaded: the fpm worker answered the readiness request, but got status 200 with 0 byte(s): does the application file call exit() or die() when it is loaded?', Environment::bootFailure($fpmExit));

        $fpmFatal = "2026-11-23T11:29:08.207+00:00 [fpm worker] warning: stderr: PHP Fatal error:  Allowed memory size exhausted in /srv/app.php on line 3\n";
        self::assertSame('the application could not be loaded: PHP Fatal error: Allowed memory size exhausted in /srv/app.php on line 3', Environment::bootFailure($fpmFatal));

        // exit() in the app file: workers end as they start, with nothing else in the log.
        $exits = $master;
        for ($i = 0; $i < 2; $i++) {
            $exits .= "2026-11-23T11:04:14.164+00:00 [master 13918] info: Worker 1 (pid 1392$i) exited with code 0 after 0 s; restarting\n";
        }
        self::assertNull(Environment::bootFailure($exits), 'two restarts may be bad luck');
        $exits .= "2026-11-23T11:04:14.177+00:00 [master 13918] info: Worker 1 (pid 13928) exited with code 0 after 0 s; restarting\n";
        self::assertStringContainsString('every worker exited as it started (exit code 0)', (string) Environment::bootFailure($exits));
        self::assertStringContainsString('exit() or die()', (string) Environment::bootFailure($exits));

        // A fatal error at load: the worker's own critical line says what it was.
        $fatal = $master;
        for ($i = 0; $i < 3; $i++) {
            $fatal .= "2026-11-23T11:04:32.927+00:00 [worker 1569$i] critical: Fatal error (--memory-limit 128M) while running no request: Allowed memory size exhausted in /srv/app.php:3\n"
                . "2026-11-23T11:04:32.934+00:00 [master 15692] warning: Worker 1 (pid 1569$i) exited with code 255 after 0 s; restarting in 0.1 s\n";
        }
        self::assertStringContainsString('(exit code 255) before the server was ready: Fatal error (--memory-limit 128M) while running no request: Allowed memory size exhausted in /srv/app.php:3', (string) Environment::bootFailure($fatal));
    }
}
