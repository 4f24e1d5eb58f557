<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Bench;

use PHPUnit\Framework\TestCase;

/** `bin/weft bench framework` end to end on a tiny matrix: both fixture apps, resident and under fpm. */
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
            '--concurrency', '4', '--modes', 'fpm,coroutine', '--out', $this->out];
        $process = proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, $root);
        self::assertIsResource($process);
        $output = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        self::assertSame(0, proc_close($process), $output);

        $results = json_decode((string) file_get_contents("$this->out/results.json"), true);
        $rows = $results['scenarios']['framework']['rows'];
        self::assertCount(4, $rows);
        $seen = [];
        foreach ($rows as $row) {
            self::assertSame('ok', $row['status'], (string) $row['reason']);
            self::assertGreaterThan(0, $row['metrics']['rps'], json_encode($row['params']));
            // Every answer was a 200 (the scenario checks the body first); a socket error at the very
            // end of a short run on a loaded machine is wrk's business, not the bridges'.
            $errors = $row['metrics']['errors'];
            self::assertSame(0, $errors['non2xx'], json_encode($row['params']));
            self::assertLessThanOrEqual(max(1, intdiv((int) $row['metrics']['requests'], 100)), array_sum($errors), json_encode($row['params']) . ' ' . json_encode($errors));
            $seen[] = $row['params']['app'] . ' ' . $row['params']['mode'];
        }
        sort($seen);
        self::assertSame(['laravel coroutine', 'laravel fpm', 'symfony coroutine', 'symfony fpm'], $seen);
        $report = (string) file_get_contents("$this->out/report.md");
        self::assertStringContainsString('## framework', $report);
        self::assertMatchesRegularExpression('/symfony c=4: fpm [\d,.]+ req\/s; coroutine [\d,.]+ req\/s \([\d.]+x fpm\)/', $report);
        self::assertStringContainsString('resident several times fpm', $report);
    }
}
