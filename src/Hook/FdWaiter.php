<?php

declare(strict_types=1);

namespace Weft\Hook;

use Weft\Coroutine\Coroutine;
use Weft\Coroutine\Scheduler;
use Weft\Loop\DescriptorDriver;
use Weft\Loop\Driver;
use Weft\Loop\InvalidWatcher;

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
    /**
     * With READ or WRITE: the descriptor is a hooked stream's, whose close calls forget() first, so its
     * watcher can stay between waits (disabled): a connection waited on query after query costs one
     * epoll_ctl(ADD) for its life instead of an ADD and a DEL per wait, and no new watcher or closure.
     */
    public const KEEP = 4;

    /** @var array<int, string> fd << 1 | (1 for WRITE) => the watcher kept for it (disabled between waits) */
    private array $kept = [];
    /** @var array<int, Coroutine> the same key => the coroutine waiting on that watcher now */
    private array $waiters = [];
    /** @var array<int, \Closure> the same key => the timeout callback of its waits */
    private array $timeouts = [];
    /** The driver the kept watchers belong to (a forked worker builds its own: they are then dropped). */
    private ?Driver $keptDriver = null;

    /** Whether the code running now is a Weft coroutine (the exit hook asks). */
    public static function inCoroutine(): bool
    {
        $current = Scheduler::get()->current;
        return $current !== null && $current->fiber === \Fiber::getCurrent();
    }

    /** @return ?int the ready events (READ | WRITE), 0 when the timeout passed, null: block instead */
    public function wait(int $fd, int $events, float $timeout): ?int
    {
        if ($events === (self::READ | self::KEEP) || $events === (self::WRITE | self::KEEP)) {
            $scheduler = Scheduler::get();
            $driver = $scheduler->driver;
            if ($driver instanceof DescriptorDriver) {
                $current = $scheduler->current;
                if ($current === null || $current->fiber !== \Fiber::getCurrent() || $timeout === 0.0) {
                    return null;
                }
                $key = $fd << 1 | ($events & self::WRITE) >> 1;
                if (!isset($this->waiters[$key])) {
                    return $this->waitKept($scheduler, $driver, $current, $fd, $key, $events & ~self::KEEP, $timeout);
                }
            }
        }
        $events &= ~self::KEEP;
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
     * The descriptor of a hooked stream is about to be closed (the extension calls this first, while it
     * is still open): its kept watchers go, so the kernel's registration goes with the right file and a
     * later descriptor with the same number starts afresh.
     */
    public function forget(int $fd): void
    {
        foreach ([$fd << 1, $fd << 1 | 1] as $key) {
            $id = $this->kept[$key] ?? null;
            if ($id !== null) {
                unset($this->kept[$key], $this->timeouts[$key]);
                $this->keptDriver?->cancel($id);
            }
        }
    }

    private function waitKept(Scheduler $scheduler, Driver&DescriptorDriver $driver, Coroutine $current, int $fd, int $key, int $events, float $timeout): int
    {
        if ($this->keptDriver !== $driver) {
            $this->kept = $this->waiters = $this->timeouts = [];
            $this->keptDriver = $driver;
        }
        $id = $this->kept[$key] ?? null;
        if ($id !== null) {
            try {
                $driver->enable($id);
            } catch (InvalidWatcher) {
                $id = null; // the driver dropped it (the descriptor was seen closed): start afresh
            }
        }
        if ($id === null) {
            // One callback per kept watcher, for its whole life: it wakes whoever waits on it now.
            $waiters = &$this->waiters;
            $wake = static function () use (&$waiters, $key, $scheduler, $events): void {
                $waiter = $waiters[$key] ?? null;
                if ($waiter !== null && $waiter->waiting) {
                    unset($waiters[$key]);
                    $scheduler->resume($waiter, $events);
                }
            };
            $id = $this->kept[$key] = $events === self::READ ? $driver->onReadableFd($fd, $wake) : $driver->onWritableFd($fd, $wake);
            $this->timeouts[$key] = static function () use (&$waiters, $key, $scheduler): void {
                $waiter = $waiters[$key] ?? null;
                if ($waiter !== null && $waiter->waiting) {
                    unset($waiters[$key]);
                    $scheduler->resume($waiter, 0);
                }
            };
        }
        $this->waiters[$key] = $current;
        $timer = $timeout >= 0 ? $driver->delay($timeout, $this->timeouts[$key]) : null;
        try {
            return $scheduler->await();
        } finally {
            // Woken, timed out or cancelled: the watcher stays, disabled (no system call until the
            // loop's next wait, and none at all when this descriptor is waited on again before it).
            unset($this->waiters[$key]);
            if (($this->kept[$key] ?? null) === $id) {
                try {
                    $driver->disable($id);
                } catch (InvalidWatcher) {
                    unset($this->kept[$key], $this->timeouts[$key]);
                }
            }
            if ($timer !== null) {
                $driver->cancel($timer);
            }
        }
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
