<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\Loop\Driver;

/**
 * Deadlines for many connections without a timer each: connections note their deadline in a table and
 * one coarse, unreferenced timer expires the overdue ones. Arming and disarming a deadline per request
 * is then an array write, not a timer-heap insert and removal.
 *
 * Resolution is the sweep interval (default 0.25 s): fine for header, idle and keep-alive timeouts.
 */
final class IdleSweeper
{
    /** @var array<int, float> key => absolute deadline (monotonic seconds) */
    private array $deadlines = [];
    /** @var array<int, \Closure(): void> */
    private array $onExpire = [];
    private ?string $timer = null;

    public function __construct(private readonly Driver $driver, private readonly float $interval = 0.25)
    {
    }

    /** Arms (or re-arms) the deadline of $key, $seconds from now. */
    public function arm(int $key, float $seconds, \Closure $onExpire): void
    {
        $this->deadlines[$key] = \hrtime(true) / 1e9 + $seconds;
        $this->onExpire[$key] = $onExpire;
        if ($this->timer === null) {
            $this->timer = $this->driver->repeat($this->interval, $this->sweep(...));
            $this->driver->unreference($this->timer);
        }
    }

    public function disarm(int $key): void
    {
        unset($this->deadlines[$key], $this->onExpire[$key]);
    }

    public function count(): int
    {
        return \count($this->deadlines);
    }

    private function sweep(): void
    {
        $now = \hrtime(true) / 1e9;
        foreach ($this->deadlines as $key => $deadline) {
            if ($deadline <= $now) {
                $callback = $this->onExpire[$key];
                unset($this->deadlines[$key], $this->onExpire[$key]);
                $callback();
            }
        }
        if ($this->deadlines === [] && $this->timer !== null) {
            $this->driver->cancel($this->timer);
            $this->timer = null;
        }
    }
}
