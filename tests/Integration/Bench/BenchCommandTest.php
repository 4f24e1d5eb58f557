<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Bench;

use PHPUnit\Framework\TestCase;

/**
 * `bin/weft bench` end to end, on a tiny matrix: real servers, real wrk, the report, the JSON and the
 * charts; and Ctrl-C in the middle of a run stops everything and still writes what was measured.
 */
final class BenchCommandTest extends TestCase
{
    private string $out;
    /** @var resource|null */
    private $process = null;

    protected function setUp(): void
    {
        if (!self::which('wrk')) {
            self::markTestSkipped('wrk is not installed (Debian package wrk)');
        }
        $this->out = \sys_get_temp_dir() . '/weft-bench-test-' . \getmypid() . '-' . \bin2hex(\random_bytes(3));
    }

    protected function tearDown(): void
    {
        if (\is_resource($this->process)) {
            $status = \proc_get_status($this->process);
            if ($status['running']) {
                \posix_kill($status['pid'], \SIGKILL);
            }
            \proc_close($this->process);
        }
        if (isset($this->out) && \is_dir($this->out)) {
            foreach (new \RecursiveIteratorIterator(new \RecursiveDirectoryIterator($this->out, \FilesystemIterator::SKIP_DOTS), \RecursiveIteratorIterator::CHILD_FIRST) as $entry) {
                $entry->isDir() ? \rmdir($entry->getPathname()) : \unlink($entry->getPathname());
            }
            \rmdir($this->out);
        }
        if (isset($this->out)) {
            @\unlink($this->out . '.stdout');
            @\unlink($this->out . '.stderr');
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

    /** @param list<string> $args */
    private function start(array $args): int
    {
        $root = \dirname(__DIR__, 3);
        $this->process = \proc_open(
            [\PHP_BINARY, "$root/bin/weft", 'bench', ...$args, '--out', $this->out],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', $this->out . '.stdout', 'w'], 2 => ['file', $this->out . '.stderr', 'w']],
            $pipes,
            $root,
        );
        self::assertIsResource($this->process);
        return (int) \proc_get_status($this->process)['pid'];
    }

    private function wait(float $timeout): int
    {
        $deadline = \microtime(true) + $timeout;
        while (\microtime(true) < $deadline) {
            $status = \proc_get_status($this->process);
            if (!$status['running']) {
                return $status['exitcode'];
            }
            \usleep(50_000);
        }
        self::fail("bin/weft bench did not finish within $timeout s: " . @\file_get_contents($this->out . '.stderr'));
    }

    /** @return array<string, mixed> */
    private function results(): array
    {
        self::assertFileExists($this->out . '/results.json');
        $results = \json_decode((string) \file_get_contents($this->out . '/results.json'), true);
        self::assertIsArray($results, 'results.json is valid JSON');
        return $results;
    }

    public function testTinyHelloRunEndToEnd(): void
    {
        \mkdir($this->out);
        $this->start(['hello', '--quick', '--duration', '1', '--workers', '1', '--concurrency', '10', '--modes', 'coroutine', '--loops', 'select']);
        $code = $this->wait(60);
        self::assertSame(0, $code, (string) @\file_get_contents($this->out . '.stderr'));

        $results = $this->results();
        self::assertTrue($results['complete']);
        self::assertGreaterThanOrEqual(1, $results['machine']['cores']);
        self::assertArrayHasKey('cpu_model', $results['machine']);
        self::assertArrayHasKey('wrk_version', $results['machine']);
        self::assertSame(['opcache.enable_cli=1', 'opcache.jit=tracing', 'opcache.jit_buffer_size=64M', 'opcache.jit_max_root_traces=16384', 'opcache.jit_max_side_traces=1024', 'opcache.jit_max_exit_counters=32768'], $results['server_php']['flags']);
        $rows = $results['scenarios']['hello']['rows'];
        self::assertCount(1, $rows);
        $row = $rows[0];
        self::assertSame('ok', $row['status'], (string) $row['reason']);
        self::assertSame(['mode' => 'coroutine', 'loop' => 'select', 'workers' => 1, 'concurrency' => 10], $row['params']);
        self::assertGreaterThan(0, $row['metrics']['rps']);
        self::assertSame(0, \array_sum($row['metrics']['errors']), 'no connect/read/write/timeout/non-2xx errors');
        self::assertNotNull($row['metrics']['p99_ms']);
        self::assertGreaterThan(0, $row['metrics']['rss_bytes']);
        self::assertGreaterThanOrEqual(2, $row['metrics']['processes'], 'master and worker');
        self::assertNotEmpty($results['scenarios']['hello']['findings']);

        $report = (string) \file_get_contents($this->out . '/report.md');
        self::assertStringContainsString('## hello', $report);
        self::assertStringContainsString('| coroutine | select | 1 | 10 |', $report);
        self::assertStringContainsString('**Findings.**', $report);
        foreach (['hello-rps.svg', 'hello-p99.svg'] as $svg) {
            self::assertFileExists("$this->out/$svg");
            $dom = new \DOMDocument();
            self::assertTrue(@$dom->loadXML((string) \file_get_contents("$this->out/$svg")), "$svg is well-formed");
            self::assertStringContainsString("]($svg)", $report);
        }
    }

    /**
     * The terminal gets the results, not only the report's path: each row's figures as the row ends and
     * the table with its verdicts at the end. One sync worker sleeping 10 ms per request answers at most
     * 100 requests a second, so its 1 s row at 100 connections cannot reach two answers per connection:
     * it is marked too short to judge and left out of the verdicts, whatever the machine's speed.
     */
    public function testTerminalShowsEachRowAndTheTableAndMarksShortRows(): void
    {
        \mkdir($this->out);
        $this->start(['sleep', '--quick', '--duration', '1', '--workers', '1', '--concurrency', '100', '--modes', 'sync,coroutine', '--loops', 'select']);
        $code = $this->wait(90);
        $stderr = (string) @\file_get_contents($this->out . '.stderr');
        self::assertSame(0, $code, $stderr);
        $stdout = (string) \file_get_contents($this->out . '.stdout');

        // One line of figures per row, in the order they ran, before the table.
        self::assertSame(1, \preg_match('/^sleep sync select w=1 c=100: bound req\/s 100, req\/s [\d.,]+, p50 ms [\d.,]+, .*errors [^,]*, CPU %.*\[too short to judge: [\d,]+ answers over 100 connections/m', $stdout), $stdout);
        self::assertSame(1, \preg_match('/^sleep coroutine select w=1 c=100: bound req\/s 10,000, req\/s [\d.,]+, p50 ms /m', $stdout), $stdout);
        $table = \strpos($stdout, '| mode | loop | workers |');
        self::assertNotFalse($table, "the final table is on stdout: $stdout");
        self::assertLessThan($table, \strpos($stdout, 'sleep sync select w=1 c=100:'));
        self::assertStringContainsString('| sync | select | 1 | 100 |', $stdout);
        self::assertStringContainsString('| coroutine | select | 1 | 100 |', $stdout);
        self::assertStringContainsString('Left out of these verdicts, too short to judge', \substr($stdout, $table));
        self::assertStringContainsString('sync select w=1 c=100 (', \substr($stdout, \strpos($stdout, 'Left out of these verdicts')));
        // The sync row was left out: its check has no row to judge.
        self::assertMatchesRegularExpression('/➖ \*\*not evaluated\*\* — sync mode near workers/', $stdout);
        self::assertStringNotContainsString('weft bench:', $stdout, 'progress stays on stderr');
        self::assertStringContainsString('/report.md', $stderr);

        // The report files are still written, and say the same.
        $results = $this->results();
        $rows = $results['scenarios']['sleep']['rows'];
        self::assertCount(2, $rows);
        self::assertStringStartsWith('too short to judge: ', (string) $rows[0]['too_short']);
        self::assertLessThan(200, $rows[0]['metrics']['requests']);
        self::assertArrayHasKey('no_answer', $rows[0]['metrics']['errors']);
        self::assertSame(100, $rows[0]['metrics']['connections']);
        self::assertSame([['row' => 'sync select w=1 c=100', 'reason' => $rows[0]['too_short']]], $results['scenarios']['sleep']['too_short']);
        self::assertStringContainsString('Left out of these verdicts, too short to judge', (string) \file_get_contents($this->out . '/report.md'));
    }

    public function testInterruptStopsEverythingAndKeepsWhatWasMeasured(): void
    {
        \mkdir($this->out);
        // Two rows of 20 s: the interrupt comes during the first.
        $runner = $this->start(['hello', '--duration', '20', '--workers', '1', '--concurrency', '10', '--modes', 'coroutine,sync', '--loops', 'select']);

        // Wait until the first server runs and wrk loads it (its log file appears), never for a fixed time.
        $deadline = \microtime(true) + 30;
        $pidFile = null;
        $wrkStarted = false;
        while (\microtime(true) < $deadline && !($pidFile !== null && $wrkStarted)) {
            $pidFile = \glob($this->out . '/logs/*.pid')[0] ?? null;
            $wrkStarted = \glob($this->out . '/logs/*-wrk-hello.log') !== [];
            \usleep(20_000);
        }
        self::assertNotNull($pidFile, 'the first server started');
        self::assertTrue($wrkStarted, 'wrk started');
        $master = (int) \trim((string) \file_get_contents($pidFile));
        self::assertSame(1, \preg_match('/READY (\d+)/', (string) \file_get_contents(\substr($pidFile, 0, -4) . '.out'), $m));
        $port = $m[1];
        self::assertGreaterThan(0, $master);
        self::assertTrue(\posix_kill($master, 0));

        \posix_kill($runner, \SIGINT);
        $code = $this->wait(30);
        self::assertSame(130, $code);

        self::assertFalse(@\posix_kill($master, 0), 'the server master is gone');
        $results = $this->results();
        self::assertTrue($results['interrupted']);
        self::assertFalse($results['complete']);
        $rows = $results['scenarios']['hello']['rows'];
        self::assertCount(2, $rows);
        self::assertSame('skipped', $rows[1]['status']);
        self::assertSame('interrupted', $rows[1]['reason']);
        self::assertFileExists($this->out . '/report.md');
        self::assertStringContainsString('interrupted', (string) \file_get_contents($this->out . '/report.md'));
        // Nothing the run started is left: no server (its pid file is in the output folder) and no wrk
        // (its URL has the server's port) still runs.
        foreach (\glob('/proc/[0-9]*/cmdline') ?: [] as $cmdline) {
            $text = \str_replace("\0", ' ', (string) @\file_get_contents($cmdline));
            self::assertStringNotContainsString($this->out . '/logs', $text, "left behind: $text");
            self::assertStringNotContainsString("127.0.0.1:$port/", $text, "left behind: $text");
        }
    }
}
