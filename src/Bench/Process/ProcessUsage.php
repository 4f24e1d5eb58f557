<?php

declare(strict_types=1);

namespace Weft\Bench\Process;

/** One process at one instant: CPU time used so far and memory (RSS, and PSS where the kernel has it). */
final class ProcessUsage
{
    public function __construct(
        public readonly int $pid,
        public readonly int $cpuTicks,
        public readonly int $rssBytes,
        public readonly ?int $pssBytes,
    ) {
    }

    public static function read(int $pid, int $pageSize = 4096): ?self
    {
        $fields = ProcessTree::statFields($pid);
        if ($fields === null || \count($fields) < 22) {
            return null;
        }
        $cpu = (int) $fields[11] + (int) $fields[12];
        $rss = (int) $fields[21] * $pageSize;
        $pss = null;
        // smaps_rollup (Linux >= 4.14) sums every mapping; PSS divides each shared page among the processes
        // that map it, so forked workers sharing their parent's pages are not counted once per worker.
        $rollup = @\file_get_contents("/proc/$pid/smaps_rollup");
        if ($rollup !== false && $rollup !== '') {
            if (\preg_match('/^Rss:\s+(\d+) kB/m', $rollup, $m)) {
                $rss = (int) $m[1] * 1024;
            }
            if (\preg_match('/^Pss:\s+(\d+) kB/m', $rollup, $m)) {
                $pss = (int) $m[1] * 1024;
            }
        }
        return new self($pid, $cpu, $rss, $pss);
    }
}
