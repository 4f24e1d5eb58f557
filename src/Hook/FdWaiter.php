<?php

declare(strict_types=1);

namespace Weft\Hook;

use Weft\Coroutine\Coroutine;
use Weft\Coroutine\Scheduler;
use Weft\Coroutine\TimeLimit;
use Weft\Ext\Hooks as Native;
use Weft\Loop\DescriptorDriver;
use Weft\Loop\Driver;
use Weft\Loop\NativeDriver;
use Weft\Loop\InvalidWatcher;
use Weft\Loop\Loop;

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
 * Two ways to watch, one way to wait: a hooked stream's descriptor keeps its watcher and its time limit
 * between waits (KEEP, waitKept()); any other descriptor is watched for one wait (waitOnce()). Either
 * way the coroutine suspends in a Coroutine\TimeLimit's wait (Scheduler::await() under the hook's
 * timeout): a watcher resumes it with the ready events, the limit with "none" (0, []), and a
 * cancellation throws into it.
 *
 * @internal installed by Hooks::enable()
 */
final class FdWaiter
{
    public const READ = 1;
    public const WRITE = 2;
    /**
     * With READ or WRITE: the descriptor is a hooked stream's, whose close calls forget() first, so its
     * watcher can stay between waits: a connection waited on query after query costs one epoll_ctl(ADD)
     * for its life instead of an ADD and a DEL per wait, and no new watcher, closure or timer.
     */
    public const KEEP = 4;
    /**
     * From the extension, with READ or WRITE, when the native loop is idle (the extension decides that,
     * next to the loop: ext/weft_loop.c): instead of waiting, wait() may return true, "this coroutine
     * may hold the loop". The hook then polls its descriptor together with the loop's epoll descriptor in
     * C, with no Fiber switch and no loop tick, and calls wait() again without this flag when anything
     * else needs the loop first (see ext/weft_hooks.h, WEFT_WAIT_IDLE). A query in a worker with nothing
     * else to do then costs what it costs without hooks.
     */
    public const IDLE = 8;

    /** @var array<int, string> fd << 1 | (1 for WRITE) => the watcher kept for it (unreferenced between waits) */
    private array $kept = [];
    /** @var array<int, true> the same key => its watcher is disabled (it fired while nobody waited) */
    private array $parked = [];
    /** @var array<int, Coroutine> the same key => the coroutine waiting on that watcher now */
    private array $waiters = [];
    /** @var array<int, TimeLimit> the same key => the time limit of its waits (lazy: one timer for many waits) */
    private array $limits = [];
    /** The driver the kept watchers belong to (a forked worker builds its own: they are then dropped). */
    private ?DescriptorDriver $keptDriver = null;
    /** The driver the extension polls next to a hook's descriptor when idle (Hooks::idleLoop()); null: not told yet. */
    private ?Driver $idleDriver = null;

    /** Whether the code running now is a Weft coroutine (the exit hook asks). */
    public static function inCoroutine(): bool
    {
        return Scheduler::get()->running() !== null;
    }

    /**
     * @return int|true|null the ready events (READ | WRITE), 0 when the timeout passed, null: block
     *     instead; with IDLE, true: this coroutine may hold the loop (see IDLE)
     */
    public function wait(int $fd, int $events, float $timeout): int|bool|null
    {
        if (($events & self::IDLE) !== 0) {
            $events &= ~self::IDLE;
            if ($this->idle($fd, $events, $timeout)) {
                return true;
            }
        }
        $scheduler = Scheduler::get();
        $driver = $scheduler->driver;
        if ($this->idleDriver !== $driver) {
            $this->bindIdle($driver);
        }
        $current = $scheduler->current;
        if ($current === null || $timeout === 0.0 || !$current->runsHere()) {
            return null;
        }
        if ($events === (self::READ | self::KEEP) || $events === (self::WRITE | self::KEEP)) {
            // The driver the kept watchers live on was checked when they were made: no instanceof per wait.
            if ($driver === $this->keptDriver || $driver instanceof DescriptorDriver) {
                $key = $fd << 1 | ($events & self::WRITE) >> 1;
                if (!isset($this->waiters[$key])) {
                    // waitKept() and endKeptWait() inlined when the watcher is in place and enabled: this is
                    // every query's wait (two frames fewer each, of the handful between hook and suspend).
                    $id = $this->kept[$key] ?? null;
                    if ($id === null || $driver !== $this->keptDriver || isset($this->parked[$key])) {
                        return $this->waitKept($scheduler, $driver, $current, $fd, $key, $events & ~self::KEEP, $timeout);
                    }
                    try {
                        $driver->reference($id);
                    } catch (InvalidWatcher) {
                        return $this->waitKept($scheduler, $driver, $current, $fd, $key, $events & ~self::KEEP, $timeout);
                    }
                    $this->waiters[$key] = $current;
                    $limit = $this->limits[$key] ??= new TimeLimit($scheduler, 0);
                    try {
                        $ready = $limit->await($timeout);
                    } catch (\Throwable $e) {
                        $this->endKeptWait($driver, $key, $id);
                        throw $e;
                    }
                    unset($this->waiters[$key]);
                    if (($this->kept[$key] ?? null) === $id) {
                        try {
                            $driver->unreference($id);
                        } catch (InvalidWatcher) {
                            unset($this->kept[$key], $this->parked[$key]);
                        }
                    }
                    return $ready;
                }
            }
        }
        $ready = $this->waitOnce($scheduler, $current, [$fd => $events & (self::READ | self::WRITE)], $timeout);
        return $ready[$fd] ?? 0;
    }

    /**
     * The coroutine's half of "may this wait hold the loop" (the loop's half, idle or not, is decided in
     * C before the extension asks): a Weft coroutine the loop itself entered, on the loop the extension
     * polls, with nothing queued to run first.
     */
    private function idle(int $fd, int $events, float $timeout): bool
    {
        $scheduler = Scheduler::get();
        $driver = $scheduler->driver;
        if ($driver !== $this->idleDriver || $timeout === 0.0 || !$scheduler->mayHoldTheLoop()) {
            return false;
        }
        $current = $scheduler->running();
        if ($current === null) {
            return false;
        }
        // A write watcher kept for this descriptor would make the loop's epoll descriptor ready at once
        // (a socket is writable nearly always): park it while a read waits here; the next write that
        // waits through the loop enables it again. A kept read watcher stays: both descriptors turn
        // ready together, and the hook looks at its own first. The extension applies the change to the
        // kernel's set before it polls.
        $write = $fd << 1 | 1;
        if (($events & self::READ) !== 0 && $this->keptDriver === $driver
            && isset($this->kept[$write]) && !isset($this->parked[$write])) {
            $this->parked[$write] = true;
            $driver->disable($this->kept[$write]);
        }
        return true;
    }

    /** Hooks::install() dropped the extension's idle loop: tell it the current loop's again. */
    public function installed(): void
    {
        $this->bindIdle(Loop::get());
    }

    /**
     * Tells the extension the current loop, for its idle polls: the native one only (a hook on the select
     * loop always waits through the loop).
     */
    private function bindIdle(Driver $driver): void
    {
        if ($driver instanceof NativeDriver) {
            Native::idleLoop($driver);
            $this->idleDriver = $driver;
            return;
        }
        Native::idleLoop(null);
        $this->idleDriver = $driver;
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
                unset($this->kept[$key], $this->parked[$key]);
                $this->keptDriver?->cancel($id);
            }
            $limit = $this->limits[$key] ?? null;
            if ($limit !== null) {
                unset($this->limits[$key]);
                $limit->drop();
            }
        }
    }

    private function waitKept(Scheduler $scheduler, DescriptorDriver $driver, Coroutine $current, int $fd, int $key, int $events, float $timeout): int
    {
        if ($this->keptDriver !== $driver) {
            $this->kept = $this->parked = $this->waiters = $this->limits = [];
            $this->keptDriver = $driver;
        }
        $id = $this->kept[$key] ?? null;
        try {
            if ($id === null) {
                $id = $this->keep($scheduler, $driver, $fd, $key, $events);
            } elseif (isset($this->parked[$key])) {
                unset($this->parked[$key]);
                $driver->enable($id);
            }
            // Between waits the watcher is unreferenced (an idle pooled connection must not keep run()
            // going); during one it holds the loop like any wait does.
            $driver->reference($id);
        } catch (InvalidWatcher) {
            // The driver dropped it (the descriptor was seen closed): start afresh.
            unset($this->parked[$key]);
            $id = $this->keep($scheduler, $driver, $fd, $key, $events);
            $driver->reference($id);
        }
        $this->waiters[$key] = $current;
        $limit = $this->limits[$key] ??= new TimeLimit($scheduler, 0);
        // Catch and rethrow rather than finally: the rule for hot paths (Scheduler's docblock).
        try {
            $ready = $limit->await($timeout);
        } catch (\Throwable $e) {
            $this->endKeptWait($driver, $key, $id);
            throw $e;
        }
        $this->endKeptWait($driver, $key, $id);
        return $ready;
    }

    /**
     * The watcher kept for a hooked stream's descriptor, for its whole life. It stays enabled between
     * waits (a query and its answer cost no watcher change at all); only when it fires with nobody
     * waiting (the peer sent or closed while the connection sat idle) is it parked, disabled, until the
     * next wait, so a level-triggered readiness nobody consumes does not wake the loop over and over.
     */
    private function keep(Scheduler $scheduler, DescriptorDriver $driver, int $fd, int $key, int $events): string
    {
        $waiters = &$this->waiters;
        $parked = &$this->parked;
        $wake = static function (string $id) use (&$waiters, &$parked, $key, $scheduler, $driver, $events): void {
            $waiter = $waiters[$key] ?? null;
            if ($waiter !== null && $waiter->isWaiting()) {
                unset($waiters[$key]);
                $scheduler->resume($waiter, $events, true);
                return;
            }
            if ($waiter === null && !isset($parked[$key])) {
                $parked[$key] = true;
                $driver->disable($id);
            }
        };
        $id = $this->kept[$key] = $events === self::READ ? $driver->onReadableFd($fd, $wake) : $driver->onWritableFd($fd, $wake);
        $driver->unreference($id);
        return $id;
    }

    /**
     * Woken, timed out or cancelled: the watcher stays (no system call at all when the descriptor is
     * waited on again), unreferenced. The time limit's timer stays too: the next wait only moves its deadline.
     */
    private function endKeptWait(Driver $driver, int $key, string $id): void
    {
        unset($this->waiters[$key]);
        if (($this->kept[$key] ?? null) === $id) {
            try {
                $driver->unreference($id);
            } catch (InvalidWatcher) {
                unset($this->kept[$key], $this->parked[$key]);
            }
        }
    }

    /**
     * @param array<int, int> $fds descriptor => READ | WRITE; empty: a plain sleep of $timeout seconds
     * @return ?array<int, int> the ready descriptors => events (empty on timeout), null: block instead
     */
    public function waitMany(array $fds, float $timeout): ?array
    {
        $scheduler = Scheduler::get();
        $current = $scheduler->running();
        if ($current === null || $timeout === 0.0 || ($timeout < 0 && $fds === [])) {
            // No coroutine, a poll that does not wait, or a wait for nothing, forever (only a signal ends
            // it, as poll(2) would): the hook does what it does without Weft.
            return null;
        }
        if ($fds === []) {
            // poll(2) on nothing: the sleep hook's usleep(), sleep(), time_nanosleep(). Its limit is all
            // that ends it (this costs what Weft\sleep() costs: scripts/hooked-wait-ir.php, usleep mode).
            return TimeLimit::once($scheduler, $timeout, []);
        }
        return $this->waitOnce($scheduler, $current, $fds, $timeout);
    }

    /**
     * A wait on descriptors watched for this wait only (curl's, the DNS hook's, anything not kept): one
     * watcher per descriptor and direction, gone when the wait ends.
     *
     * @param non-empty-array<int, int> $fds
     * @return array<int, int>
     */
    private function waitOnce(Scheduler $scheduler, Coroutine $current, array $fds, float $timeout): array
    {
        $driver = $scheduler->driver;
        $direct = $driver instanceof DescriptorDriver;
        $ready = [];
        $wake = static function (int $fd, int $bit) use ($scheduler, $current, &$ready): void {
            $ready[$fd] = ($ready[$fd] ?? 0) | $bit;
            if ($current->isWaiting()) {
                $scheduler->resume($current, true);
            }
        };
        /** @var list<string> $watchers */
        $watchers = [];
        /** @var list<resource> $dups */
        $dups = [];
        try {
            foreach ($fds as $fd => $events) {
                $stream = null;
                if (!$direct) {
                    // stream_select() takes streams only: watch a dup()ed php://fd stream of it.
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
            if ($ready === []) {
                // A watcher's wake-up brings true; the limit's, false. Whatever else is ready by the time
                // the coroutine runs again is in $ready too, as poll(2) reports every ready descriptor.
                TimeLimit::once($scheduler, $timeout, false);
            }
        } finally {
            foreach ($watchers as $id) {
                $driver->cancel($id);
            }
            foreach ($dups as $stream) {
                \fclose($stream);
            }
        }
        return $ready;
    }
}
