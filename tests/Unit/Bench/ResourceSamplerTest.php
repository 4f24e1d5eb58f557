<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Bench;

use PHPUnit\Framework\TestCase;
use Weft\Bench\Process\ProcessTree;
use Weft\Bench\Process\ProcessUsage;
use Weft\Bench\Process\ResourceSampler;

/** /proc sampling, on this very test process and a child it starts. */
final class ResourceSamplerTest extends TestCase
{
    protected function setUp(): void
    {
        if (!\is_readable('/proc/self/stat')) {
            self::markTestSkipped('no /proc here');
        }
    }

    public function testReadsTheUsageOfThisProcess(): void
    {
        $usage = ProcessUsage::read(\getmypid());
        self::assertNotNull($usage);
        self::assertGreaterThan(1 << 20, $usage->rssBytes, 'a PHP process with PHPUnit loaded has more than 1 MB resident');
        if (\is_readable('/proc/self/smaps_rollup')) {
            self::assertNotNull($usage->pssBytes);
            self::assertGreaterThan(0, $usage->pssBytes);
            self::assertLessThanOrEqual($usage->rssBytes, $usage->pssBytes, 'PSS never exceeds RSS');
        }
        self::assertNull(ProcessUsage::read(999_999_999));
    }

    public function testCountsCpuTimeBetweenSamples(): void
    {
        $sampler = new ResourceSampler(\getmypid());
        $sampler->sample();
        // Spin until this process has used 0.3 s of CPU, not 0.3 s of wall time: on a loaded machine the
        // wall clock runs ahead of our share of the CPU.
        $cpu = static function (): float {
            $u = \getrusage();
            return $u['ru_utime.tv_sec'] + $u['ru_utime.tv_usec'] / 1e6 + $u['ru_stime.tv_sec'] + $u['ru_stime.tv_usec'] / 1e6;
        };
        $until = $cpu() + 0.3;
        $deadline = \hrtime(true) + 30_000_000_000;
        $x = 0;
        while ($cpu() < $until && \hrtime(true) < $deadline) {
            $x++;
        }
        $sampler->sample();
        $summary = $sampler->summary();
        self::assertGreaterThan(0.2, $summary['cpu_s'], '0.3 s of busy loop shows as CPU time (clock ticks of 10 ms)');
        self::assertGreaterThan(0.0, $summary['cpu_pct']);
        self::assertGreaterThan(0, $summary['rss_bytes']);
        self::assertSame(2, $summary['samples']);
        self::assertGreaterThanOrEqual(1, $summary['processes']);
        self::assertGreaterThan(0, $x);
    }

    public function testTheTreeHoldsChildrenAndItsTotalsAddThemUp(): void
    {
        $child = \proc_open([\PHP_BINARY, '-r', '$s = str_repeat("x", 20 << 20); fgets(STDIN);'], [0 => ['pipe', 'r'], 1 => ['pipe', 'w']], $pipes);
        self::assertIsResource($child);
        try {
            $pid = \proc_get_status($child)['pid'];
            $deadline = \microtime(true) + 10;
            while (\microtime(true) < $deadline && ((ProcessUsage::read($pid)?->rssBytes ?? 0) < (20 << 20))) {
                \usleep(10_000);
            }
            self::assertContains($pid, ProcessTree::members(\getmypid()));
            self::assertContains(\getmypid(), ProcessTree::members(\getmypid()));
            self::assertNotNull(ProcessTree::startTime($pid));

            $alone = ProcessUsage::read(\getmypid());
            $sampler = new ResourceSampler(\getmypid());
            $sampler->sample();
            $summary = $sampler->summary();
            self::assertGreaterThanOrEqual(2, $summary['processes']);
            self::assertGreaterThan($alone->rssBytes + (15 << 20), $summary['rss_bytes'], "the child's 20 MB string counts in the total");
        } finally {
            \fwrite($pipes[0], "\n");
            \fclose($pipes[0]);
            \fclose($pipes[1]);
            \proc_close($child);
        }
    }
}
