<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * Mutual exclusion between coroutines, handed over in arrival order. Only the coroutine that holds the
 * lock may release it. Outside of any coroutine the holder is {main}, which waits like a coroutine.
 * Misuse (re-locking, an unlock by another coroutine) throws SyncMisuse.
 */
final class Mutex
{
    private bool $locked = false;
    private ?Coroutine $owner = null;
    private readonly WaitQueue $waiters;

    public function __construct()
    {
        $this->waiters = new WaitQueue();
    }

    public function lock(?float $timeout = null): void
    {
        $scheduler = Scheduler::get();
        if (!$this->locked) {
            $this->locked = true;
            $this->owner = $scheduler->self();
            return;
        }
        if ($this->owner === $scheduler->self()) {
            throw SyncMisuse::mutexReentered();
        }
        $this->waiters->wait($timeout, 'Mutex lock');
        // unlock() handed the lock to us before waking us.
    }

    public function tryLock(): bool
    {
        if ($this->locked) {
            return false;
        }
        $this->locked = true;
        $this->owner = Scheduler::get()->self();
        return true;
    }

    public function unlock(): void
    {
        if (!$this->locked) {
            throw SyncMisuse::mutexNotLocked();
        }
        $scheduler = Scheduler::get();
        if ($this->owner !== $scheduler->self()) {
            throw SyncMisuse::mutexNotOwned();
        }
        $next = $this->waiters->shift();
        if ($next !== null) {
            $this->owner = $next[0];
            $scheduler->resume($next[0]);
            return;
        }
        $this->locked = false;
        $this->owner = null;
    }

    public function isLocked(): bool
    {
        return $this->locked;
    }

    /** @template T @param \Closure(): T $critical @return T */
    public function synchronized(\Closure $critical, ?float $timeout = null): mixed
    {
        $this->lock($timeout);
        try {
            return $critical();
        } finally {
            $this->unlock();
        }
    }
}
