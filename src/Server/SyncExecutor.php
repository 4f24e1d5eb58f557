<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\Coroutine\Coroutine;
use Weft\Coroutine\Scheduler;
use Weft\Loop\Driver;

/**
 * Runs the application outside of any coroutine, one call at a time, while the event loop is stopped.
 *
 * A connection coroutine that has a request queues the call and suspends; the queue is run by drive(),
 * the worker's main loop, between turns of the event loop. Inside the call no coroutine is current and
 * the loop is not running, so every Weft wait (sockets, clients, sleep) takes its blocking path.
 */
final class SyncExecutor implements Executor
{
    /** @var list<array{Coroutine, \Closure, array}> */
    private array $queue = [];
    private int $calls = 0;
    private ?\Closure $listener = null;

    public function __construct(private readonly Driver $driver)
    {
    }

    public function call(\Closure $call, mixed ...$args): mixed
    {
        $scheduler = Scheduler::get();
        if ($scheduler->current === null) {
            try {
                return $call(...$args);
            } finally {
                $this->calls++;
            }
        }
        $this->queue[] = [$scheduler->current, $call, $args];
        $this->driver->stop();
        [$ok, $value] = $scheduler->await();
        if (!$ok) {
            throw $value;
        }
        return $value;
    }

    public function mode(): string
    {
        return 'sync';
    }

    public function calls(): int
    {
        return $this->calls;
    }

    public function onCall(?\Closure $listener): void
    {
        $this->listener = $listener;
    }

    /** Runs the event loop and the queued calls in turn until $done says stop. */
    public function drive(\Closure $done): void
    {
        $scheduler = Scheduler::get();
        while (true) {
            $this->driver->run();
            if ($this->queue === [] && $done()) {
                return;
            }
            while ($this->queue !== []) {
                [$coroutine, $call, $args] = \array_shift($this->queue);
                try {
                    $result = [true, $call(...$args)];
                } catch (\Throwable $e) {
                    $result = [false, $e];
                }
                $this->calls++;
                if ($this->listener !== null) {
                    ($this->listener)($this->calls);
                }
                $scheduler->resume($coroutine, $result);
            }
        }
    }
}
