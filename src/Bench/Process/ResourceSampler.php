<?php

declare(strict_types=1);

namespace Weft\Bench\Process;

/**
 * Samples a whole server (every process of its tree) from /proc while the load runs: call sample() every
 * half second or so, then summary(). CPU is the utime + stime all the server's processes spent between
 * the first and the last sample; memory is the largest total seen in any one sample.
 */
final class ResourceSampler
{
    /** @var array<int, int> CPU ticks of each pid when first seen (0 for a process born during the run) */
    private array $firstTicks = [];
    /** @var array<int, int> */
    private array $lastTicks = [];
    private ?float $startedAt = null;
    private float $lastAt = 0.0;
    private int $peakRss = 0;
    private ?int $peakPss = null;
    private int $peakProcesses = 0;
    private int $samples = 0;

    public function __construct(
        private readonly int $rootPid,
        private readonly int $clockTicks = 100,
        private readonly int $pageSize = 4096,
    ) {
    }

    public function sample(): void
    {
        $now = \hrtime(true) / 1e9;
        $first = $this->startedAt === null;
        $this->startedAt ??= $now;
        $this->lastAt = $now;
        $rss = 0;
        $pss = 0;
        $pssKnown = true;
        $count = 0;
        foreach (ProcessTree::members($this->rootPid) as $pid) {
            $usage = ProcessUsage::read($pid, $this->pageSize);
            if ($usage === null) {
                continue;
            }
            $count++;
            if (!isset($this->firstTicks[$pid])) {
                $this->firstTicks[$pid] = $first ? $usage->cpuTicks : 0;
            }
            $this->lastTicks[$pid] = $usage->cpuTicks;
            $rss += $usage->rssBytes;
            if ($usage->pssBytes === null) {
                $pssKnown = false;
            } else {
                $pss += $usage->pssBytes;
            }
        }
        $this->samples++;
        $this->peakRss = \max($this->peakRss, $rss);
        $this->peakProcesses = \max($this->peakProcesses, $count);
        if ($pssKnown && $count > 0) {
            $this->peakPss = \max($this->peakPss ?? 0, $pss);
        }
    }

    public function cpuSeconds(): float
    {
        $ticks = 0;
        foreach ($this->lastTicks as $pid => $last) {
            $ticks += $last - $this->firstTicks[$pid];
        }
        return $ticks / $this->clockTicks;
    }

    public function wallSeconds(): float
    {
        return $this->startedAt === null ? 0.0 : $this->lastAt - $this->startedAt;
    }

    /**
     * @return array{cpu_s: float, cpu_pct: ?float, rss_bytes: int, pss_bytes: ?int, processes: int, samples: int}
     *         cpu_pct is in percent of one core (200 = two cores busy)
     */
    public function summary(): array
    {
        $wall = $this->wallSeconds();
        return [
            'cpu_s' => \round($this->cpuSeconds(), 3),
            'cpu_pct' => $wall > 0 ? \round($this->cpuSeconds() / $wall * 100, 1) : null,
            'rss_bytes' => $this->peakRss,
            'pss_bytes' => $this->peakPss,
            'processes' => $this->peakProcesses,
            'samples' => $this->samples,
        ];
    }
}
