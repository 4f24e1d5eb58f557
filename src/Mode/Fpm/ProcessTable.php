<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

/**
 * A snapshot of /proc: who is whose child, which process group, how much memory. Used to report
 * nginx's and php-fpm's processes in `bin/weft status` and to make sure none outlives Weft.
 */
final class ProcessTable
{
    /** @param array<int, array{ppid: int, pgid: int, rss: int}> $processes */
    private function __construct(private readonly array $processes)
    {
    }

    public static function snapshot(): self
    {
        $processes = [];
        $page = 4096;
        foreach (\scandir('/proc') ?: [] as $entry) {
            if (!\ctype_digit($entry)) {
                continue;
            }
            $stat = @\file_get_contents("/proc/$entry/stat");
            if ($stat === false) {
                continue;
            }
            // "pid (comm) state ppid pgrp ..." where comm may hold spaces and parentheses.
            $fields = \explode(' ', \substr($stat, (int) \strrpos($stat, ')') + 2));
            if (($fields[0] ?? '') === 'Z' || ($fields[0] ?? '') === 'X') {
                continue; // dead, waiting to be reaped (in a container, PID 1 may never do it)
            }
            $processes[(int) $entry] = ['ppid' => (int) ($fields[1] ?? 0), 'pgid' => (int) ($fields[2] ?? 0), 'rss' => (int) ($fields[21] ?? 0) * $page];
        }
        return new self($processes);
    }

    public function exists(int $pid): bool
    {
        return isset($this->processes[$pid]);
    }

    /** @return list<int> */
    public function children(int $pid): array
    {
        $children = [];
        foreach ($this->processes as $child => $process) {
            if ($process['ppid'] === $pid) {
                $children[] = $child;
            }
        }
        return $children;
    }

    /** @return list<int> every process in the process group */
    public function group(int $pgid): array
    {
        $members = [];
        foreach ($this->processes as $pid => $process) {
            if ($process['pgid'] === $pgid) {
                $members[] = $pid;
            }
        }
        return $members;
    }

    public function rss(int $pid): int
    {
        return $this->processes[$pid]['rss'] ?? 0;
    }

    /** Running: a zombie (exited, not reaped) answers kill(0) but counts as gone. */
    public static function alive(int $pid): bool
    {
        if ($pid <= 0 || !@\posix_kill($pid, 0)) {
            return false;
        }
        $stat = @\file_get_contents("/proc/$pid/stat");
        return $stat === false || \substr($stat, (int) \strrpos($stat, ')') + 2, 1) !== 'Z';
    }

    /** The command line as the process shows it ("php-fpm: pool weft"); "" when gone. */
    public static function commandLine(int $pid): string
    {
        return \trim(\str_replace("\0", ' ', (string) @\file_get_contents("/proc/$pid/cmdline")));
    }
}
