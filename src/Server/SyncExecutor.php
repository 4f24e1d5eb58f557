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
    private const HELD_SIGNALS = [\SIGTERM, \SIGINT, \SIGHUP, \SIGUSR1, \SIGUSR2];

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

    /**
     * The stop and reload signals wait while the application runs. A signal delivered during the app's
     * own usleep()/sleep()/a blocking read would end that call early (EINTR: nanosleep is never
     * restarted), so a stop would shorten a 2 s sleep to whenever it arrived. Held back, it is
     * delivered when the call returns, and the worker then drains as usual. A worker stuck in a call
     * is still ended: the master's liveness check follows with SIGKILL, which cannot be blocked.
     */
    private function blockSignals(): void
    {
        if (\function_exists('pcntl_sigprocmask')) {
            \pcntl_sigprocmask(\SIG_BLOCK, self::HELD_SIGNALS);
        }
    }

    private function unblockSignals(): void
    {
        if (\function_exists('pcntl_sigprocmask')) {
            \pcntl_sigprocmask(\SIG_UNBLOCK, self::HELD_SIGNALS);
        }
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
                $this->blockSignals();
                try {
                    $result = [true, $call(...$args)];
                } catch (\Throwable $e) {
                    $result = [false, $e];
                } finally {
                    $this->unblockSignals();
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
