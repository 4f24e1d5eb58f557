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
        // Busy until the kernel has charged 0.3 s of CPU to us, however long that takes on a loaded
        // machine (a wall-clock loop gets whatever share of a core the machine leaves it).
        $start = ProcessUsage::read(\getmypid())->cpuTicks;
        $deadline = \hrtime(true) + 60_000_000_000;
        $x = 0;
        while (ProcessUsage::read(\getmypid())->cpuTicks - $start < 30 && \hrtime(true) < $deadline) {
            for ($i = 0; $i < 100_000; $i++) {
                $x++;
            }
        }
        $sampler->sample();
        $summary = $sampler->summary();
        self::assertGreaterThanOrEqual(0.3, $summary['cpu_s'], 'the 0.3 s of CPU burnt between the samples');
        self::assertGreaterThan(0.0, $summary['cpu_pct']);
        self::assertGreaterThan(0, $summary['rss_bytes']);
        self::assertSame(2, $summary['samples']);
        self::assertGreaterThanOrEqual(1, $summary['processes']);
        self::assertGreaterThan(0, $x);
    }

    /**
     * Sampled on a tree of our own, not on this test process: PHPUnit's process has other children
     * coming and going (servers of other tests being stopped), so its totals are not ours to predict.
     * Here both members are blocked reading stdin, and their RSS does not move while we look.
     */
    public function testTheTreeHoldsChildrenAndItsTotalsAddThemUp(): void
    {
        $childCode = '$s = str_repeat("x", 20 << 20); echo "ready\n"; fgets(STDIN);';
        $parentCode = '$c = proc_open([PHP_BINARY, "-r", ' . \var_export($childCode, true) . '], [0 => ["pipe", "r"], 1 => ["pipe", "w"]], $p);'
            . ' echo fgets($p[1]); fgets(STDIN); fwrite($p[0], "\n"); proc_close($c);';
        $parent = \proc_open([\PHP_BINARY, '-r', $parentCode], [0 => ['pipe', 'r'], 1 => ['pipe', 'w']], $pipes);
        self::assertIsResource($parent);
        try {
            self::assertSame("ready\n", \fgets($pipes[1]), 'the child holds its 20 MB');
            $root = \proc_get_status($parent)['pid'];
            $members = ProcessTree::members($root);
            self::assertCount(2, $members);
            self::assertContains($root, $members);
            $child = \array_values(\array_diff($members, [$root]))[0];
            self::assertNotNull(ProcessTree::startTime($child));

            $sampler = new ResourceSampler($root);
            $sampler->sample();
            $summary = $sampler->summary();
            $parts = ProcessUsage::read($root)->rssBytes + ProcessUsage::read($child)->rssBytes;
            self::assertSame(2, $summary['processes']);
            self::assertGreaterThan(20 << 20, ProcessUsage::read($child)->rssBytes, "the child's 20 MB string is resident");
            // Both are idle: the total is the sum of the parts (a page or two of slack for the kernel).
            self::assertEqualsWithDelta($parts, $summary['rss_bytes'], 1 << 20);
        } finally {
            \fwrite($pipes[0], "\n");
            \fclose($pipes[0]);
            \fclose($pipes[1]);
            \proc_close($parent);
        }
    }
}
