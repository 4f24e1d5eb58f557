<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\Coroutine\Scheduler;

/** @internal A worker's figures as reported to the master. */
final class Stats
{
    /** @var array<string, \Closure(): int> figures the layers above report (figure()) */
    private static array $figures = [];

    /**
     * Reports a figure of this worker with the others (in `status`, `/metrics` and the bench), read at
     * each report: the framework instances a worker booted, for one. A key given again replaces it.
     *
     * @param \Closure(): int $read
     */
    public static function figure(string $key, \Closure $read): void
    {
        self::$figures[$key] = $read;
    }

    /** @return array<string, mixed> */
    public static function collect(int $connections, int $requests, float $started, string $mode, string $loop): array
    {
        $scheduler = Scheduler::get()->stats();
        return [
            'pid' => \getmypid(),
            'started' => $started,
            'mode' => $mode,
            'loop' => $loop,
            'requests' => $requests,
            'connections' => $connections,
            'coroutines' => $scheduler['live'],
            'memory' => \memory_get_usage(true),
            'rss' => self::rss(),
            'opcache' => (bool) \ini_get('opcache.enable_cli'),
            'jit' => \function_exists('opcache_get_status') && (\opcache_get_status(false)['jit']['on'] ?? false),
            'updated' => \microtime(true),
            'running' => InFlight::oldest(),
        ] + self::figures() + \Weft\Hook\WorkerHooks::stats();
    }

    /** @return array<string, int> */
    private static function figures(): array
    {
        return \array_map(static fn (\Closure $read): int => $read(), self::$figures);
    }

    /**
     * Resident set size of this process in bytes, from /proc (0 where there is no /proc). By pid, not
     * through /proc/self: PHP's realpath cache keeps what /proc/self resolved to before a fork.
     */
    public static function rss(int $pid = 0): int
    {
        $statm = @\file_get_contents('/proc/' . ($pid ?: \getmypid()) . '/statm');
        if ($statm === false) {
            return 0;
        }
        $fields = \explode(' ', $statm);
        return (int) ($fields[1] ?? 0) * 4096;
    }
}
