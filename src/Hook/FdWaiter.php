<?php

declare(strict_types=1);

namespace Weft\Hook;

use Weft\Coroutine\Scheduler;
use Weft\Loop\DescriptorDriver;

/**
 * The waiter the extension's hooks call (through Weft\Ext\Hooks::install()) when a blocking call inside
 * a coroutine would wait on a descriptor: it suspends the calling coroutine until the loop sees one of
 * the descriptors ready, the timeout passes, or the coroutine is cancelled (the cancellation's exception
 * is thrown from here into the hook, which fails its operation with it).
 *
 * The descriptors are raw numbers: the hooked code (mysqlnd, libcurl) owns them and may have no stream
 * resource PHP code can see. The epoll driver watches a raw descriptor directly; for the select driver
 * each wait watches a dup()ed php://fd stream instead (stream_select() takes streams only).
 *
 * Returning null tells the extension that there is no Weft coroutine to suspend (a plain Fiber of the
 * application, the loop's own context): the hook then blocks exactly as it would without Weft.
 *
 * @internal installed by Hooks::enable()
 */
final class FdWaiter
{
    public const READ = 1;
    public const WRITE = 2;

    /** Whether the code running now is a Weft coroutine (the exit hook asks). */
    public static function inCoroutine(): bool
    {
        $current = Scheduler::get()->current;
        return $current !== null && $current->fiber === \Fiber::getCurrent();
    }

    /** @return ?int the ready events (READ | WRITE), 0 when the timeout passed, null: block instead */
    public function wait(int $fd, int $events, float $timeout): ?int
    {
        if ($events === self::READ || $events === self::WRITE) {
            // The hot path (every hooked read or write that would block): one watcher, one closure.
            $scheduler = Scheduler::get();
            $driver = $scheduler->driver;
            if ($driver instanceof DescriptorDriver) {
                $current = $scheduler->current;
                if ($current === null || $current->fiber !== \Fiber::getCurrent() || $timeout === 0.0) {
                    return null;
                }
                // The watcher and the timer resume the coroutine with what happened; a cancellation
                // (which clears $waiting first) finds both still registered and the finally removes them.
                $wake = static function (string $id, mixed $what = null) use ($scheduler, $current, $events): void {
                    if ($current->waiting) {
                        $scheduler->resume($current, \is_int($what) ? $events : 0);
                    }
                };
                $watcher = $events === self::READ ? $driver->onReadableFd($fd, $wake) : $driver->onWritableFd($fd, $wake);
                $timer = $timeout >= 0 ? $driver->delay($timeout, $wake) : null;
                try {
                    return $scheduler->await();
                } finally {
                    $driver->cancel($watcher);
                    if ($timer !== null) {
                        $driver->cancel($timer);
                    }
                }
            }
        }
        $ready = $this->suspend([$fd => $events], $timeout);
        return $ready === null ? null : ($ready[$fd] ?? 0);
    }

    /**
     * @param array<int, int> $fds descriptor => READ | WRITE; empty: a plain sleep of $timeout seconds
     * @return ?array<int, int> the ready descriptors => events (empty on timeout), null: block instead
     */
    public function waitMany(array $fds, float $timeout): ?array
    {
        return $this->suspend($fds, $timeout);
    }

    /** @param array<int, int> $fds @return ?array<int, int> */
    private function suspend(array $fds, float $timeout): ?array
    {
        $scheduler = Scheduler::get();
        $current = $scheduler->current;
        if ($current === null || $current->fiber !== \Fiber::getCurrent() || $timeout === 0.0) {
            return null;
        }
        if ($timeout < 0 && $fds === []) {
            return null; // a wait for nothing, forever: only a signal ends it, as poll(2) would
        }
        $driver = $scheduler->driver;
        $direct = $driver instanceof DescriptorDriver;
        $ready = [];
        /** @var list<string> $watchers */
        $watchers = [];
        /** @var list<resource> $dups */
        $dups = [];
        $timer = null;
        $done = false;
        $wake = static function (int $fd, int $bit) use ($scheduler, $current, &$ready, &$done): void {
            $ready[$fd] = ($ready[$fd] ?? 0) | $bit;
            if (!$done && $current->waiting) {
                $done = true;
                $scheduler->resume($current);
            }
        };
        $cleanup = static function () use ($driver, &$watchers, &$timer): void {
            foreach ($watchers as $id) {
                $driver->cancel($id);
            }
            $watchers = [];
            if ($timer !== null) {
                $driver->cancel($timer);
                $timer = null;
            }
        };
        try {
            foreach ($fds as $fd => $events) {
                $stream = null;
                if (!$direct) {
                    $stream = @\fopen("php://fd/{$fd}", 'r');
                    if ($stream === false) {
                        // Not an open descriptor: poll(2) would say POLLNVAL at once; so do we.
                        $ready[$fd] = self::READ;
                        continue;
                    }
                    $dups[] = $stream;
                }
                if (($events & self::READ) !== 0) {
                    $onReady = static fn () => $wake($fd, self::READ);
                    $watchers[] = $direct ? $driver->onReadableFd($fd, $onReady) : $driver->onReadable($stream, $onReady);
                }
                if (($events & self::WRITE) !== 0) {
                    $onReady = static fn () => $wake($fd, self::WRITE);
                    $watchers[] = $direct ? $driver->onWritableFd($fd, $onReady) : $driver->onWritable($stream, $onReady);
                }
            }
            if ($ready !== []) {
                return $ready;
            }
            if ($timeout >= 0) {
                $timer = $driver->delay($timeout, static function () use ($scheduler, $current, &$done): void {
                    if (!$done && $current->waiting) {
                        $done = true;
                        $scheduler->resume($current);
                    }
                });
            }
            $scheduler->await($cleanup);
            return $ready;
        } finally {
            $cleanup();
            foreach ($dups as $stream) {
                \fclose($stream);
            }
        }
    }
}
