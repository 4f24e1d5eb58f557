<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Bench;

use PHPUnit\Framework\TestCase;
use Weft\Bench\Reference\Netty;
use Weft\Bench\Scenario\Sql3Scenario;

/**
 * `bin/weft bench app`, `--baseline`, `--port-range` and the Netty reference end to end on tiny matrices:
 * real servers, real wrk. The recommendation is checked against the rows of the same run, never against
 * a fixed answer: on a loaded machine the figures move, the consistency must not.
 */
final class BenchAppTest extends TestCase
{
    private string $out;

    protected function setUp(): void
    {
        if (!self::which('wrk')) {
            self::markTestSkipped('wrk is not installed (Debian package wrk)');
        }
        $this->out = \sys_get_temp_dir() . '/weft-bench-app-' . \getmypid() . '-' . \bin2hex(\random_bytes(3));
    }

    protected function tearDown(): void
    {
        if (isset($this->out)) {
            \exec('rm -rf ' . \escapeshellarg($this->out) . ' ' . \escapeshellarg($this->out . '.hits'));
        }
    }

    private static function which(string $tool): bool
    {
        foreach (\array_merge(\explode(':', (string) \getenv('PATH')), ['/usr/bin', '/usr/sbin']) as $dir) {
            if ($dir !== '' && \is_executable("$dir/$tool")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Runs bin/weft bench to the end (bounded) and returns [exit code, stdout, stderr].
     *
     * @param list<string> $args
     * @param array<string, string>|null $env
     * @return array{0: int, 1: string, 2: string}
     */
    private function bench(array $args, float $timeout, ?array $env = null): array
    {
        $root = \dirname(__DIR__, 3);
        $process = \proc_open(
            [\PHP_BINARY, "$root/bin/weft", 'bench', ...$args, '--out', $this->out],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', $this->out . '.stdout', 'w'], 2 => ['file', $this->out . '.stderr', 'w']],
            $pipes,
            $root,
            $env,
        );
        self::assertIsResource($process);
        $deadline = \microtime(true) + $timeout;
        while (($status = \proc_get_status($process))['running'] && \microtime(true) < $deadline) {
            \usleep(100_000);
        }
        if ($status['running']) {
            // SIGINT: the runner stops its servers and writes what it has.
            \posix_kill($status['pid'], \SIGINT);
            \usleep(3_000_000);
            \proc_terminate($process, \SIGKILL);
        }
        \proc_close($process);
        $stdout = (string) @\file_get_contents($this->out . '.stdout');
        $stderr = (string) @\file_get_contents($this->out . '.stderr');
        @\unlink($this->out . '.stdout');
        @\unlink($this->out . '.stderr');
        self::assertFalse($status['running'], "bin/weft bench did not finish within $timeout s: $stderr");
        return [$status['exitcode'], $stdout, $stderr];
    }

    /** @return array<string, mixed> */
    private function results(): array
    {
        $results = \json_decode((string) \file_get_contents($this->out . '/results.json'), true);
        self::assertIsArray($results);
        return $results;
    }

    /**
     * The recommendation follows from the rows: the best eligible row (p99 under the target, no errors),
     * ties within 5 % to the smaller memory; its knee, its range under the target and the "alone" figures
     * are those of the rows.
     *
     * @param list<array<string, mixed>> $rows
     * @param array<string, mixed> $advice
     */
    private static function assertConsistent(array $rows, array $advice): void
    {
        $target = $advice['p99_target_ms'];
        $ok = \array_values(\array_filter($rows, static fn (array $r): bool => $r['status'] === 'ok' && ($r['metrics']['rps'] ?? null) !== null));
        self::assertNotEmpty($ok, 'rows ran');
        $eligible = \array_values(\array_filter($ok, static function (array $r) use ($target): bool {
            $errors = \array_sum($r['metrics']['errors']);
            return $r['metrics']['p99_ms'] !== null && $r['metrics']['p99_ms'] <= $target && $r['metrics']['rps'] > 0
                && $errors <= 0.001 * \max(1, $r['metrics']['requests'] + $errors);
        }));
        if ($eligible === []) {
            self::assertNull($advice['recommended']);
            return;
        }
        $rec = $advice['recommended'];
        self::assertNotNull($rec, 'a row met the target, so there is a recommendation');
        $same = static fn (array $r): bool => $r['params']['mode'] === $rec['mode'] && $r['params']['workers'] === $rec['workers'] && $r['params']['loop'] === $rec['loop'];
        $matches = \array_values(\array_filter($eligible, static fn (array $r): bool => $same($r) && $r['params']['concurrency'] === $rec['concurrency']));
        self::assertCount(1, $matches, 'the recommended row is an eligible row of the run');
        self::assertSame($matches[0]['metrics']['rps'], $rec['rps']);
        self::assertLessThanOrEqual($target, $rec['p99_ms']);
        $max = \max(\array_map(static fn (array $r): float => $r['metrics']['rps'], $eligible));
        self::assertGreaterThanOrEqual(0.95 * $max, $rec['rps'], 'no eligible row was more than 5 % faster');
        foreach ($eligible as $r) {
            if ($r['metrics']['rps'] >= 0.95 * $max && $r['metrics']['pss_bytes'] !== null && $rec['pss_bytes'] !== null) {
                self::assertLessThanOrEqual($r['metrics']['pss_bytes'], $rec['pss_bytes'], 'a tie goes to the smaller memory');
            }
        }
        $config = \array_values(\array_filter($ok, $same));
        \usort($config, static fn (array $a, array $b): int => $a['params']['concurrency'] <=> $b['params']['concurrency']);
        $peak = \max(\array_map(static fn (array $r): float => $r['metrics']['rps'], $config));
        if ($advice['knee_concurrency'] === null) {
            // No knee in the measured range: one level, or requests/s still rising by 5 % or more at the last.
            $last = $config[\count($config) - 1];
            self::assertTrue(\count($config) === 1 || ($last['metrics']['rps'] >= $peak && $last['metrics']['rps'] >= 1.05 * $config[\count($config) - 2]['metrics']['rps']), 'no knee only when none was reached');
        }
        foreach ($config as $r) {
            if ($r['params']['concurrency'] < $advice['knee_concurrency']) {
                self::assertLessThan(0.9 * $peak, $r['metrics']['rps'], 'below the knee the configuration had not reached 90 % of its peak');
            } elseif ($r['params']['concurrency'] === $advice['knee_concurrency']) {
                self::assertGreaterThanOrEqual(0.9 * $peak, $r['metrics']['rps']);
            }
        }
        $under = \array_filter($config, static fn (array $r): bool => \in_array($r, $eligible, true));
        self::assertSame(\max(\array_map(static fn (array $r): int => $r['params']['concurrency'], $under)), $advice['max_concurrency_under_target']);
        self::assertSame($advice['blocking']['evidence'] !== [], $advice['blocking']['suspected']);
        if ($advice['alone'] !== null) {
            $alone = \array_values(\array_filter($ok, static fn (array $r): bool => $r['params']['concurrency'] === 1 && \str_contains($advice['alone']['label'], $r['params']['mode'] . ' ')
                && \str_contains($advice['alone']['label'], 'w=' . $r['params']['workers'])));
            self::assertNotEmpty($alone, 'the "alone" figures come from a concurrency-1 row');
            self::assertEqualsWithDelta(\max(0.0, 1 - $advice['alone']['cpu_us'] / ($advice['alone']['latency_ms'] * 1000)), $advice['alone']['wait_share'], 0.001);
        }
        self::assertNotEmpty($advice['reasons']);
    }

    public function testSql3QuickRecommendationMatchesItsRows(): void
    {
        $url = \parse_url(Sql3Scenario::url());
        $probe = @\fsockopen($url['host'] ?? '127.0.0.1', $url['port'] ?? 3306, $errno, $error, 2.0);
        if ($probe === false) {
            self::markTestSkipped('MariaDB is not reachable (composer test starts it)');
        }
        \fclose($probe);
        $root = \dirname(__DIR__, 3);
        [$code, $stdout, $stderr] = $this->bench(['app', "$root/examples/sql3.php", '--quick', '--duration', '1', '--modes', 'coroutine,sync', '--workers', '1,4', '--json', '--env', 'DATABASE_URL=' . Sql3Scenario::url()], 240);
        self::assertSame(0, $code, $stderr);
        $json = \json_decode($stdout, true);
        self::assertIsArray($json, "stdout is the JSON recommendation: $stdout");
        $results = $this->results();
        self::assertSame($results['recommendations']['app'], $json['recommendation']);
        $rows = $results['scenarios']['app']['rows'];
        // The climb starts at concurrency 1 for every configuration and goes up from there.
        foreach ([['coroutine', 1], ['sync', 1], ['sync', 4], ['coroutine', 4]] as [$mode, $workers]) {
            $levels = \array_map(static fn (array $r) => $r['params']['concurrency'], \array_filter($rows, static fn (array $r) => $r['params']['mode'] === $mode && $r['params']['workers'] === $workers));
            self::assertSame(1, \array_values($levels)[0] ?? null, "$mode w=$workers starts at concurrency 1");
        }
        self::assertConsistent($rows, $json['recommendation']);
        $report = (string) \file_get_contents($this->out . '/report.md');
        self::assertStringContainsString('## Recommendation for sql3.php', $report);
        self::assertLessThan(\strpos($report, '## app'), \strpos($report, '## Recommendation'), 'the recommendation is at the top');
        self::assertFileExists($this->out . '/app-rps.svg');
    }

    public function testCpuBoundAppAndARequestMix(): void
    {
        $hits = $this->out . '.hits';
        $app = __DIR__ . '/fixtures/cpu-app.php';
        [$code, $stdout, $stderr] = $this->bench([
            'app', $app, '--duration', '1', '--modes', 'coroutine,sync', '--workers', '1,2', '--concurrency', '1,8',
            '--url', '/a', '--url', '/b?x=1', '--method', 'POST', '--body', '{"n": 1}', '--header', 'X-Bench: yes', '--env', "HITS_FILE=$hits",
            '--port-range', '23500-23539',
        ], 180);
        self::assertSame(0, $code, $stderr);
        self::assertStringContainsString('Recommendation for ' . $app, $stdout);
        $results = $this->results();
        $rows = $results['scenarios']['app']['rows'];
        self::assertCount(8, $rows, 'fixed axes: 2 modes x 2 workers x 2 concurrency levels, no climb');
        foreach ($rows as $row) {
            self::assertSame('ok', $row['status'], (string) $row['reason']);
            // An odd connect or read error on a machine this loaded is possible (the recommendation leaves
            // such rows out); most requests must succeed.
            self::assertLessThan(0.05 * $row['metrics']['requests'] + 3, \array_sum($row['metrics']['errors']), \json_encode($row['metrics']['errors']));
        }
        self::assertConsistent($rows, $results['recommendations']['app']);
        // What was sent is in the JSON (header and environment names, never their values).
        self::assertSame(['paths' => ['/a', '/b?x=1'], 'method' => 'POST', 'body_bytes' => 8, 'headers' => ['X-Bench'], 'script' => null, 'env' => ['HITS_FILE']], $results['recommendations']['app']['request']);
        // The mix: both paths, with the method, header and body given.
        $seen = \array_count_values(\array_filter(\explode("\n", (string) @\file_get_contents($hits))));
        self::assertArrayHasKey('POST /a yes {"n": 1}', $seen, \implode(', ', \array_keys($seen)));
        self::assertArrayHasKey('POST /b?x=1 yes {"n": 1}', $seen);
        // --port-range: every server announced a port of the range.
        $ports = [];
        foreach (\glob($this->out . '/logs/*.out') ?: [] as $file) {
            if (\preg_match('/^READY (\d+)$/m', (string) \file_get_contents($file), $m)) {
                $ports[] = (int) $m[1];
            }
        }
        self::assertCount(8, $ports);
        foreach ($ports as $port) {
            self::assertGreaterThanOrEqual(23500, $port);
            self::assertLessThanOrEqual(23539, $port);
        }
    }

    public function testAnAppThatBlocksInCoroutineModeIsCalledOut(): void
    {
        [$code, $stdout, $stderr] = $this->bench(['app', __DIR__ . '/fixtures/blocking-app.php', '--duration', '2', '--modes', 'coroutine', '--workers', '1', '--concurrency', '1,16', '--json'], 120);
        self::assertSame(0, $code, $stderr);
        $advice = \json_decode($stdout, true)['recommendation'] ?? null;
        self::assertIsArray($advice, $stdout);
        $rows = $this->results()['scenarios']['app']['rows'];
        self::assertConsistent($rows, $advice);
        $wrk = \implode("\n", \array_map(static fn (string $f): string => "== $f\n" . \file_get_contents($f), \glob($this->out . '/logs/*') ?: []));
        self::assertTrue($advice['blocking']['suspected'], \json_encode(\array_map(static fn (array $r) => [$r['params'], $r['status'], $r['reason'], $r['metrics']], $rows)) . "\n" . $wrk);
        self::assertStringContainsString('Coroutine mode blocks', \implode("\n", $advice['reasons']));
    }

    public function testAnAppThatDoesNotLoadFailsAtOnceWithItsError(): void
    {
        \mkdir($this->out);
        $app = $this->out . '/broken-app.php';
        \file_put_contents($app, "<?php\nreturn static fn (\$request) => new Weft\\Http\\Message\\Response(200, [], 'x'\n");
        [$code, $stdout, $stderr] = $this->bench(['app', $app, '--quick', '--duration', '1', '--json'], 120);
        self::assertSame(1, $code, 'nothing measured is a failure a CI job sees: ' . $stderr);
        $json = \json_decode($stdout, true);
        self::assertIsArray($json, $stdout);
        self::assertTrue($json['complete']);
        self::assertNull($json['recommendation']['recommended']);
        self::assertSame(0, $json['recommendation']['rows_measured']);
        self::assertStringContainsString("could not be loaded: Unclosed '('", \implode("\n", $json['recommendation']['reasons']));
        $rows = $this->results()['scenarios']['app']['rows'];
        $firstOfMode = [];
        foreach ($rows as $row) {
            $mode = $row['params']['mode'];
            if (!isset($firstOfMode[$mode])) {
                // The error itself, seen as the worker failed, not a start timeout after its restarts.
                $firstOfMode[$mode] = true;
                self::assertSame('failed', $row['status']);
                self::assertStringContainsString("the application could not be loaded: Unclosed '(' on line 2 (at $app:3)", (string) $row['reason']);
            } else {
                self::assertSame('skipped', $row['status'], 'the other rows of the mode would fail the same way');
            }
        }
        self::assertSame(['coroutine', 'sync'], \array_keys($firstOfMode));
        self::assertStringContainsString("Unclosed '('", (string) \file_get_contents($this->out . '/report.md'));
    }

    public function testEveryLoopGivenIsAConfigurationOfItsOwn(): void
    {
        [$code, , $stderr] = $this->bench(['app', \dirname(__DIR__, 3) . '/examples/hello.php', '--duration', '1', '--modes', 'coroutine,fpm', '--loops', 'select,epoll', '--workers', '1', '--concurrency', '1'], 90);
        self::assertSame(0, $code, $stderr);
        $rows = $this->results()['scenarios']['app']['rows'];
        $configs = \array_map(static fn (array $r): string => $r['params']['mode'] . ' ' . ($r['params']['loop'] ?? '-'), $rows);
        // fpm has no loop of its own: one row, not one a loop.
        self::assertSame(['coroutine select', 'coroutine epoll', 'fpm -'], $configs);
        // ... and a line of its own in the charts.
        $svg = (string) \file_get_contents($this->out . '/app-rps.svg');
        self::assertStringContainsString('coroutine select 1 w', $svg);
        self::assertStringContainsString('coroutine epoll 1 w', $svg);
    }

    public function testAScriptLoadsAnAppThatRefusesTheCheckRequestAndAPlainRunSaysWhatToGive(): void
    {
        \mkdir($this->out);
        $app = $this->out . '/post-only.php';
        \file_put_contents($app, <<<'PHP'
            <?php
            use Weft\Http\Message\{Request, Response};
            return static fn (Request $r): Response => $r->method() === 'POST' && $r->path() === '/items'
                ? new Response(201, [], 'made') : new Response(405, [], 'POST /items only');
            PHP);
        $script = $this->out . '/posts.lua';
        \file_put_contents($script, "request = function()\n  return wrk.format(\"POST\", \"/items\", {}, \"x\")\nend\n");
        [$code, , $stderr] = $this->bench(['app', $app, '--script', $script, '--duration', '1', '--modes', 'coroutine', '--workers', '1', '--concurrency', '2'], 60);
        self::assertSame(0, $code, $stderr);
        $row = $this->results()['scenarios']['app']['rows'][0];
        self::assertSame('ok', $row['status'], (string) $row['reason']);
        self::assertSame(0, $row['metrics']['errors']['non2xx'], 'the script\'s POSTs were answered 201');
        self::assertStringContainsString('check request: GET / answered status 405', \implode(' ', $row['notes']));

        // Without the script the check request is the load's request: it fails the row, and says how to fix it.
        [$code, $stdout] = $this->bench(['app', $app, '--duration', '1', '--modes', 'coroutine', '--workers', '1', '--concurrency', '2'], 60);
        self::assertSame(1, $code);
        self::assertStringContainsString('GET / answered status 405 (body: POST /items only); give the request the app expects with --url, --method', $stdout);
    }

    public function testARowInWhichNoRequestCompletedIsAFailureThatSaysWhy(): void
    {
        \mkdir($this->out);
        $app = $this->out . '/slow-app.php';
        // 2 s a request (suspended, not blocking) against 1 s rows: wrk can never count one.
        \file_put_contents($app, "<?php\nreturn static function (\$r) { usleep(2_000_000); return new Weft\\Http\\Message\\Response(200, [], 'late'); };\n");
        [$code, $stdout] = $this->bench(['app', $app, '--duration', '1', '--modes', 'coroutine', '--workers', '1', '--concurrency', '1'], 60);
        self::assertSame(1, $code, 'nothing was measured');
        $row = $this->results()['scenarios']['app']['rows'][0];
        self::assertSame('failed', $row['status']);
        self::assertStringContainsString("no request completed in the row's 1 s of load (the check request alone took", (string) $row['reason']);
        self::assertStringContainsString('give a --duration well above the time a request takes', $stdout);
        self::assertStringNotContainsString('Raise --p99', $stdout);

        // Fast answers that wrk cannot count (HEAD from a script: wrk waits for the announced body) say so instead.
        $script = $this->out . '/head.lua';
        \file_put_contents($script, "request = function()\n  return wrk.format(\"HEAD\", \"/\")\nend\n");
        [$code] = $this->bench(['app', \dirname(__DIR__, 3) . '/examples/hello.php', '--script', $script, '--duration', '1', '--modes', 'coroutine', '--workers', '1', '--concurrency', '1'], 60);
        self::assertSame(1, $code);
        $row = $this->results()['scenarios']['app']['rows'][0];
        self::assertSame('failed', $row['status']);
        self::assertStringContainsString('wrk could not read the answers', (string) $row['reason']);
    }

    public function testOneConnectionLoadsEvenWhenTheRunnerInheritedManyDescriptors(): void
    {
        // wrk -c1 sizes its event loop for 13 descriptors: the sockets this process holds (inherited by
        // bin/weft bench and, unless it closes them, by wrk) must not push wrk's socket past that.
        $held = [];
        for ($i = 0; $i < 30; $i++) {
            $held[] = \stream_socket_server('tcp://127.0.0.1:0');
        }
        try {
            [$code, , $stderr] = $this->bench(['app', \dirname(__DIR__, 3) . '/examples/hello.php', '--duration', '1', '--modes', 'coroutine', '--workers', '1', '--concurrency', '1'], 60);
        } finally {
            foreach ($held as $socket) {
                \fclose($socket);
            }
        }
        self::assertSame(0, $code, $stderr);
        $row = $this->results()['scenarios']['app']['rows'][0];
        self::assertSame(0, $row['metrics']['errors']['connect'], 'wrk connected');
        self::assertGreaterThan(0, $row['metrics']['requests']);
    }

    public function testInterruptStopsTheSweepAndStillAdvises(): void
    {
        \mkdir($this->out);
        $root = \dirname(__DIR__, 3);
        $process = \proc_open(
            [\PHP_BINARY, "$root/bin/weft", 'bench', 'app', __DIR__ . '/fixtures/cpu-app.php', '--duration', '30', '--modes', 'coroutine,sync', '--workers', '1', '--concurrency', '4', '--json', '--out', $this->out],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', $this->out . '.stdout', 'w'], 2 => ['file', $this->out . '.stderr', 'w']],
            $pipes,
            $root,
        );
        self::assertIsResource($process);
        try {
            // Interrupt once the first server is loaded by wrk (its log appears), never after a fixed time.
            $deadline = \microtime(true) + 30;
            while (\microtime(true) < $deadline && \glob($this->out . '/logs/*-wrk-app.log') === []) {
                \usleep(20_000);
            }
            self::assertNotSame([], \glob($this->out . '/logs/*-wrk-app.log'), 'wrk started');
            \posix_kill(\proc_get_status($process)['pid'], \SIGINT);
            $deadline = \microtime(true) + 30;
            while (($status = \proc_get_status($process))['running'] && \microtime(true) < $deadline) {
                \usleep(50_000);
            }
            self::assertFalse($status['running'], 'the run stopped');
            self::assertSame(130, $status['exitcode']);
        } finally {
            $status = \proc_get_status($process);
            if ($status['running']) {
                \posix_kill($status['pid'], \SIGKILL);
            }
            \proc_close($process);
        }
        $json = \json_decode((string) \file_get_contents($this->out . '.stdout'), true);
        self::assertIsArray($json, 'the JSON is printed even when interrupted');
        self::assertFalse($json['complete']);
        $rows = $this->results()['scenarios']['app']['rows'];
        self::assertSame('skipped', $rows[\count($rows) - 1]['status']);
        foreach (\glob('/proc/[0-9]*/cmdline') ?: [] as $cmdline) {
            $text = \str_replace("\0", ' ', (string) @\file_get_contents($cmdline));
            self::assertStringNotContainsString($this->out . '/logs', $text, "left behind: $text");
        }
        @\unlink($this->out . '.stdout');
        @\unlink($this->out . '.stderr');
    }

    public function testBaselineRunsAnEarlierCommitSideBySide(): void
    {
        $root = \dirname(__DIR__, 3);
        \exec('git -C ' . \escapeshellarg($root) . ' rev-parse --verify --quiet 4f651f4^{commit} 2>/dev/null', $output, $status);
        if ($status !== 0) {
            self::markTestSkipped('commit 4f651f4 is not in this clone (shallow?)');
        }
        [$code, , $stderr] = $this->bench(['hello', '--baseline', '4f651f4', '--duration', '1', '--workers', '1', '--concurrency', '10', '--modes', 'coroutine,sync', '--loops', 'select'], 400);
        self::assertSame(0, $code, $stderr);
        $results = $this->results();
        self::assertSame('4f651f4', $results['baseline']['label']);
        self::assertStringStartsWith('4f651f4', (string) $results['baseline']['commit']);
        $rows = $results['scenarios']['hello']['rows'];
        self::assertCount(4, $rows);
        // Interleaved: each configuration on both builds, one right after the other, the order alternating.
        self::assertSame(['this', '4f651f4', '4f651f4', 'this'], \array_map(static fn (array $r) => $r['params']['build'], $rows));
        self::assertSame($rows[0]['params']['mode'], $rows[1]['params']['mode']);
        foreach ($rows as $row) {
            self::assertSame('ok', $row['status'], (string) $row['reason']);
        }
        self::assertDirectoryExists("$root/var/bench/baseline/4f651f47a4b5/vendor");
        $pairs = $results['scenarios']['hello']['comparison'];
        self::assertCount(2, $pairs);
        foreach ($pairs as $pair) {
            self::assertEqualsWithDelta($pair['this']['rps'] / $pair['baseline']['rps'], $pair['ratio']['rps'], 0.001);
        }
        $report = (string) \file_get_contents($this->out . '/report.md');
        self::assertStringContainsString('**This build against `4f651f4`**', $report);
        self::assertStringContainsString('| build | mode |', $report);
        self::assertStringContainsString('Baseline `4f651f4`', $report);
    }

    public function testNettyRowsRunWithJavaAndAreSkippedCleanlyWithout(): void
    {
        $args = ['hello', '--duration', '1', '--workers', '1', '--concurrency', '10', '--modes', 'coroutine,netty', '--loops', 'select'];
        if (Netty::unavailable() === null) {
            [$code, , $stderr] = $this->bench($args, 180);
            self::assertSame(0, $code, $stderr);
            $rows = $this->results()['scenarios']['hello']['rows'];
            $netty = \array_values(\array_filter($rows, static fn (array $r) => $r['params']['mode'] === 'netty'))[0];
            self::assertSame('ok', $netty['status'], (string) $netty['reason']);
            self::assertGreaterThan(0, $netty['metrics']['rps']);
            self::assertGreaterThan(0, $netty['metrics']['pss_bytes'], 'its memory is measured beside ours');
            self::assertStringContainsString('Against the Java Netty reference', (string) \file_get_contents($this->out . '/report.md'));
            $this->tearDown();
        }
        // Without Java (JAVA_HOME pointing nowhere): the Netty row is skipped with the reason, the rest runs.
        $env = \getenv();
        $env['JAVA_HOME'] = '/nonexistent';
        [$code, , $stderr] = $this->bench($args, 120, $env);
        self::assertSame(0, $code, $stderr);
        $rows = $this->results()['scenarios']['hello']['rows'];
        self::assertCount(2, $rows);
        self::assertSame('ok', $rows[0]['status'], (string) $rows[0]['reason']);
        self::assertSame('skipped', $rows[1]['status']);
        self::assertStringContainsString('scripts/setup.sh --with-java', (string) $rows[1]['reason']);
    }
}
