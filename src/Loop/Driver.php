<?php

declare(strict_types=1);

namespace Weft\Loop;

/**
 * The event loop contract. One driver per process: a forked child builds its own (see Loop::reset()).
 *
 * Watchers are identified by opaque string ids. Every watcher is created enabled and referenced.
 *
 * - Callbacks MUST be invoked from the loop itself, never from inside the method that registers them.
 * - A callback of a disabled or cancelled watcher MUST NOT be invoked, even if its event was already
 *   observed in the current tick.
 * - enable(), disable(), reference() and unreference() on an unknown id MUST throw InvalidWatcher;
 *   cancel() on an unknown id MUST be a no-op (cancelling twice is harmless).
 * - Deferred callbacks run once, in the order they were deferred, before the loop waits for I/O again;
 *   a callback deferred while the deferred queue is being run runs in the next tick.
 * - Timers fire in order of expiry; timers with the same expiry fire in creation order. A repeating
 *   timer re-arms relative to the time its callback was invoked, so a slow callback never causes a burst.
 * - run() returns when stop() is called, or when no enabled and referenced watcher is left.
 * - An exception thrown by a callback is passed to the error handler if one is set; otherwise run()
 *   stops and rethrows it.
 */
interface Driver
{
    /** @param resource $stream @param \Closure(string, resource): void $callback */
    public function onReadable(mixed $stream, \Closure $callback): string;

    /** @param resource $stream @param \Closure(string, resource): void $callback */
    public function onWritable(mixed $stream, \Closure $callback): string;

    /** @param \Closure(string): void $callback */
    public function delay(float $seconds, \Closure $callback): string;

    /** @param \Closure(string): void $callback */
    public function repeat(float $interval, \Closure $callback): string;

    /** @param \Closure(string, int): void $callback */
    public function onSignal(int $signal, \Closure $callback): string;

    /** @param \Closure(string): void $callback */
    public function defer(\Closure $callback): string;

    public function enable(string $id): void;

    public function disable(string $id): void;

    public function cancel(string $id): void;

    /** A referenced watcher keeps run() going; an unreferenced one does not. */
    public function reference(string $id): void;

    public function unreference(string $id): void;

    public function run(): void;

    public function stop(): void;

    public function isRunning(): bool;

    /**
     * Whether the loop owes callbacks before it may wait again: events of the running dispatch not yet
     * handed out, deferred callbacks, caught signals. Work that could be added now would only queue
     * behind them (an InstancePool admits a further request into the framework only when not).
     */
    public function owesWork(): bool;

    /** Monotonic time in seconds, updated once per tick. */
    public function now(): float;

    /** @param null|\Closure(\Throwable): void $handler */
    public function setErrorHandler(?\Closure $handler): void;

    /** Whether this driver can watch the stream (select cannot watch descriptors >= FD_SETSIZE). */
    public function canWatch(mixed $stream): bool;

    /** Short name of the mechanism, for logs and reports: "select", "epoll". */
    public function name(): string;

    /** Number of watchers by state, for stats and leak tests. @return array{enabled: int, referenced: int, total: int} */
    public function watcherCount(): array;
}
