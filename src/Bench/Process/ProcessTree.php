<?php

declare(strict_types=1);

namespace Weft\Bench\Process;

/**
 * The processes that make up one server, read from /proc: the root (a session leader, because every
 * server is started with setsid), all its descendants, and anything else still in its session (a child
 * whose parent died keeps the session). In fpm mode that is the Weft master, nginx and php-fpm with all
 * their workers.
 */
final class ProcessTree
{
    /** @return list<int> */
    public static function members(int $root): array
    {
        $parents = [];
        $sessions = [];
        foreach (self::allPids() as $pid) {
            $fields = self::statFields($pid);
            if ($fields === null) {
                continue;
            }
            $parents[$pid] = (int) $fields[1];
            $sessions[$pid] = (int) $fields[3];
        }
        $children = [];
        foreach ($parents as $pid => $parent) {
            $children[$parent][] = $pid;
        }
        $members = isset($parents[$root]) ? [$root => true] : [];
        $queue = \array_keys($members);
        while ($queue !== []) {
            $pid = \array_pop($queue);
            foreach ($children[$pid] ?? [] as $child) {
                if (!isset($members[$child])) {
                    $members[$child] = true;
                    $queue[] = $child;
                }
            }
        }
        foreach ($sessions as $pid => $session) {
            if ($session === $root) {
                $members[$pid] = true;
            }
        }
        $list = \array_keys($members);
        \sort($list);
        return $list;
    }

    /** Start time of a process (clock ticks after boot): with the pid, it names one process for certain. */
    public static function startTime(int $pid): ?int
    {
        $fields = self::statFields($pid);
        return $fields === null || !isset($fields[19]) ? null : (int) $fields[19];
    }

    /** @return list<int> */
    public static function allPids(): array
    {
        $pids = [];
        foreach (\scandir('/proc') ?: [] as $entry) {
            if (\ctype_digit($entry)) {
                $pids[] = (int) $entry;
            }
        }
        return $pids;
    }

    /**
     * The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses):
     * [0] state, [1] ppid, [2] pgrp, [3] session, ..., [11] utime, [12] stime, ..., [21] rss (pages).
     *
     * @return list<string>|null null when the process is gone
     */
    public static function statFields(int $pid): ?array
    {
        $stat = @\file_get_contents("/proc/$pid/stat");
        if ($stat === false || $stat === '') {
            return null;
        }
        $end = \strrpos($stat, ')');
        if ($end === false) {
            return null;
        }
        return \explode(' ', \trim(\substr($stat, $end + 2)));
    }
}
