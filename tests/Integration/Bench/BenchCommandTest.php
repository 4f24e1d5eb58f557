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
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', $this->out . '.stderr', 'w']],
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
        self::assertSame(['opcache.enable_cli=1', 'opcache.jit=tracing', 'opcache.jit_buffer_size=64M'], $results['server_php']['flags']);
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
