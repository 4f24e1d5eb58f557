<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * The time limit of a wait, the one way Weft builds one: a timer that, once the limit has passed, resumes
 * the coroutine waiting under it (Scheduler::resume()) with the value its owner chose for "timed out"
 * (0 for a hooked wait, false for IoWaiter). Only while that very wait is in progress:
 * a limit that fires late finds nobody and does nothing, so it never reaches a later wait, and it never
 * cancels (a cancellation is Coroutine::cancel()'s, and Weft\timeout(), a limit on a whole operation of
 * many waits, is one: it throws Timeout into whichever wait is in progress).
 *
 * - once(): a single wait (descriptors watched for this wait only). Its timer is referenced (nothing
 *   else may hold the loop) and goes when the wait ends.
 * - an instance: the limit of an owner waited on again and again (a hooked connection, query after query;
 *   a socket's reads). Its timer is updated lazily (nginx's lazy timer update): each wait only records
 *   its deadline, and the timer, when it fires before the deadline of the wait in progress, is set again
 *   for the rest; one set for later than a new, shorter deadline is replaced. No timer is added to the
 *   heap and cancelled per wait. It is unreferenced: during a wait the owner's watcher keeps the loop
 *   running, and an owner left idle must not hold run() open. drop() when the owner goes.
 *
 * Both suspend with Scheduler::await(), the only suspension there is, and rely on no finally (the rule for
 * hot paths in Scheduler's docblock).
 *
 * Weft\sleep() is not a time limit but a wait for a timer, which nothing else ends: it builds its timer
 * itself, with no frame in between (see there).
 *
 * @internal for the waits of Weft's own code (FdWaiter, IoWaiter)
 */
final class TimeLimit
{
    /** The lazy timer, null when none is set (never set, fired, or dropped). */
    private ?string $timer = null;
    /** When the timer fires (hrtime seconds). */
    private float $firesAt = 0.0;
    /** When the wait in progress times out (hrtime seconds). */
    private float $deadline = 0.0;
    /** The coroutine waiting under this limit now, null between waits. */
    private ?Coroutine $waiter = null;

    public function __construct(private readonly Scheduler $scheduler, private readonly mixed $timedOut)
    {
    }

    /**
     * One wait of the running coroutine (or {main}) for at most $seconds (< 0: no limit): returns what it
     * was resumed with, or $timedOut when the limit passed first; throws what it was woken with by
     * Scheduler::throw() or a cancellation. $onCancel as for Scheduler::await().
     *
     * $timedOut must be a value nothing else wakes this wait with: the timer is left alone when the
     * wait returns it (it fired), and is cancelled when it returns anything else.
     *
     */
    public static function once(Scheduler $scheduler, float $seconds, mixed $timedOut = null, ?\Closure $onCancel = null): mixed
    {
        if ($seconds < 0) {
            return $scheduler->await($onCancel);
        }
        $waiter = $scheduler->self();
        $driver = $scheduler->driver;
        $timer = $driver->delay($seconds, static function () use ($scheduler, $waiter, $timedOut): void {
            if ($waiter->isWaiting()) {
                $scheduler->resume($waiter, $timedOut, true);
            }
        });
        try {
            $value = $scheduler->await($onCancel);
        } catch (\Throwable $e) {
            $driver->cancel($timer);
            throw $e;
        }
        if ($value !== $timedOut) {
            $driver->cancel($timer); // woken by something else: the timer must not outlive this wait
        }
        return $value;
    }

    /** As once(), for this limit's owner; only one wait at a time (a second one is a bug, loudly). */
    public function await(float $seconds, ?\Closure $onCancel = null): mixed
    {
        $scheduler = $this->scheduler;
        if ($seconds < 0) {
            return $scheduler->await($onCancel);
        }
        if ($this->waiter !== null) {
            throw SuspensionError::limitInUse($this->waiter->id);
        }
        $deadline = \hrtime(true) / 1e9 + $seconds;
        $this->deadline = $deadline;
        if ($this->timer === null || $this->firesAt > $deadline) {
            $this->arm($seconds, $deadline);
        }
        $this->waiter = $scheduler->current ?? $scheduler->self();
        try {
            $value = $scheduler->await($onCancel);
        } catch (\Throwable $e) {
            $this->waiter = null;
            throw $e;
        }
        $this->waiter = null;
        return $value;
    }

    /** The owner goes: so does the timer. A wait in progress then has no limit. */
    public function drop(): void
    {
        if ($this->timer !== null) {
            $this->scheduler->driver->cancel($this->timer);
            $this->timer = null;
        }
    }

    private function arm(float $seconds, float $firesAt): void
    {
        $driver = $this->scheduler->driver;
        if ($this->timer !== null) {
            $driver->cancel($this->timer);
        }
        // A new closure per timer (rare: see the class docblock), not one kept in a property: that would
        // be a reference cycle, left to the cycle collector.
        $this->timer = $driver->delay($seconds, $this->expired(...));
        $driver->unreference($this->timer);
        $this->firesAt = $firesAt;
    }

    private function expired(): void
    {
        $this->timer = null;
        $waiter = $this->waiter;
        if ($waiter === null || !$waiter->isWaiting()) {
            return; // no wait in progress: the next one sets a timer again
        }
        $now = \hrtime(true) / 1e9;
        if ($now < $this->deadline) {
            $this->arm($this->deadline - $now, $this->deadline);
            return;
        }
        $this->scheduler->resume($waiter, $this->timedOut, true);
    }
}
