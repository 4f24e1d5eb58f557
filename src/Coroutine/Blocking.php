<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * Waiting from outside of any coroutine: the wait runs in a coroutine of its own while this call drives
 * the loop, then returns its result. This is how join(), WaitGroup::wait() and Weft\run() work from
 * plain code (sync mode, scripts, tests).
 *
 * @internal
 */
final class Blocking
{
    /**
     * @template T
     * @param \Closure(): T $wait
     * @return T
     */
    public static function run(\Closure $wait, bool $drainAfter = false): mixed
    {
        $scheduler = Scheduler::get();
        $driver = $scheduler->driver;
        if ($scheduler->current !== null) {
            return $wait();
        }
        if ($driver->isRunning()) {
            throw new \Error(
                'Cannot block inside an event loop callback: start a coroutine with Weft\go() and wait in it',
            );
        }
        $done = false;
        $coroutine = $scheduler->spawn(static function () use ($wait, &$done, $driver): mixed {
            try {
                return $wait();
            } finally {
                $done = true;
                $driver->stop();
            }
        });
        while (!$done) {
            $driver->run();
            if (!$done && !$driver->isRunning()) {
                // run() returned although nobody stopped it: nothing is left that could wake the wait.
                if (self::nothingLeft($scheduler)) {
                    throw DeadlockError::waiting($scheduler->live());
                }
            }
        }
        if ($drainAfter) {
            $driver->run();
            $stuck = $scheduler->live();
            if ($stuck !== []) {
                throw DeadlockError::waiting($stuck);
            }
        }
        return $coroutine->join();
    }

    /** @param \Closure(): bool $condition */
    public static function runUntil(\Closure $condition, ?float $timeout, string $what): void
    {
        self::run(static function () use ($condition, $timeout, $what): void {
            $deadline = $timeout === null ? null : \hrtime(true) / 1e9 + $timeout;
            while (!$condition()) {
                if ($deadline !== null && \hrtime(true) / 1e9 >= $deadline) {
                    throw new Timeout("Timed out after {$timeout} s waiting for $what");
                }
                \Weft\sleep(0.001);
            }
        });
    }

    private static function nothingLeft(Scheduler $scheduler): bool
    {
        $count = $scheduler->driver->watcherCount();
        return $count['referenced'] === 0;
    }
}
