<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * Coroutines waiting their turn, first come first served, each with an optional payload (a channel
 * sender's value). The one place Channel, WaitGroup and Mutex queue a coroutine, suspend it with a way
 * back out when it is cancelled or times out ({main} waits here like any coroutine).
 *
 * @internal
 */
final class WaitQueue implements \Countable
{
    /** @var array<int, array{Coroutine, mixed}> */
    private array $waiters = [];
    private int $nextKey = 0;

    /** Suspends the current coroutine here until shift() wakes it; returns what it was woken with. */
    public function wait(?float $timeout, string $what, mixed $payload = null): mixed
    {
        $wait = function () use ($payload): mixed {
            $scheduler = Scheduler::get();
            $key = $this->nextKey++;
            $this->waiters[$key] = [$scheduler->self(), $payload];
            return $scheduler->await(function () use ($key): void {
                unset($this->waiters[$key]);
            });
        };
        if ($timeout !== null) {
            $inner = $wait;
            $wait = static fn (): mixed => \Weft\timeout($timeout, $inner, $what);
        }
        return $wait();
    }

    /** Takes the longest waiting coroutine out of the queue. @return array{Coroutine, mixed}|null */
    public function shift(): ?array
    {
        $key = \array_key_first($this->waiters);
        if ($key === null) {
            return null;
        }
        $entry = $this->waiters[$key];
        unset($this->waiters[$key]);
        return $entry;
    }

    /** Empties the queue. @return list<array{Coroutine, mixed}> */
    public function takeAll(): array
    {
        $all = \array_values($this->waiters);
        $this->waiters = [];
        return $all;
    }

    public function count(): int
    {
        return \count($this->waiters);
    }
}
