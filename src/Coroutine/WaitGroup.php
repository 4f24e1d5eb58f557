<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * Waits for a number of tasks: add() before starting each, done() when each ends, wait() for all. More
 * done() than add() throws SyncMisuse and leaves the count as it was.
 */
final class WaitGroup
{
    private int $count = 0;
    private readonly WaitQueue $waiters;

    public function __construct()
    {
        $this->waiters = new WaitQueue();
    }

    public function add(int $delta = 1): void
    {
        $this->count += $delta;
        if ($this->count < 0) {
            $this->count -= $delta;
            throw SyncMisuse::waitGroupBelowZero($this->count, $delta);
        }
        if ($this->count === 0) {
            $this->wakeAll();
        }
    }

    public function done(): void
    {
        $this->add(-1);
    }

    public function count(): int
    {
        return $this->count;
    }

    public function wait(?float $timeout = null): void
    {
        if ($this->count === 0) {
            return;
        }
        $this->waiters->wait($timeout, 'WaitGroup wait');
    }

    private function wakeAll(): void
    {
        $scheduler = Scheduler::get();
        foreach ($this->waiters->takeAll() as [$waiter]) {
            $scheduler->resume($waiter);
        }
    }
}
