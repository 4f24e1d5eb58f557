<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/** Waits for a number of tasks: add() before starting each, done() when each ends, wait() for all. */
final class WaitGroup
{
    private int $count = 0;
    /** @var array<int, Coroutine> */
    private array $waiters = [];
    private int $nextKey = 0;

    public function add(int $delta = 1): void
    {
        $this->count += $delta;
        if ($this->count < 0) {
            $this->count -= $delta;
            throw new \Error('WaitGroup counter cannot go below zero (more done() than add())');
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
        $wait = function (): void {
            if ($this->count === 0) {
                return;
            }
            $scheduler = Scheduler::get();
            $key = $this->nextKey++;
            $this->waiters[$key] = $scheduler->current;
            $scheduler->await(function () use ($key): void {
                unset($this->waiters[$key]);
            });
        };
        if ($timeout !== null) {
            $inner = $wait;
            $wait = static fn () => \Weft\timeout($timeout, $inner, 'WaitGroup wait');
        }
        Scheduler::get()->current === null ? Blocking::run($wait) : $wait();
    }

    private function wakeAll(): void
    {
        $waiters = $this->waiters;
        $this->waiters = [];
        $scheduler = Scheduler::get();
        foreach ($waiters as $waiter) {
            $scheduler->resume($waiter);
        }
    }
}
