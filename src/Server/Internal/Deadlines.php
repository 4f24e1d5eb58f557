<?php

declare(strict_types=1);

namespace Weft\Server\Internal;

use Weft\Loop\Driver;

/**
 * Deadlines for many connections without a loop timer each: a timing wheel of coarse slots (0.1 s).
 * Arming, re-arming and disarming are array writes, and a sweep visits only the slots that came due,
 * so 10,000 idle keep-alive connections cost nothing until one of them expires. One unreferenced repeat
 * timer drives the wheel while any deadline is armed.
 *
 * @internal
 */
final class Deadlines
{
    private const RESOLUTION = 0.1;

    /**
     * @var array<int, array<int, (\Closure(): void)|Expiring>> slot => the keys due in it, each with what
     *      runs when it passes (there rather than in a table of its own: one entry less per armed key)
     */
    private array $slots = [];
    /** @var array<int, int> key => its slot */
    private array $slotOf = [];
    private int $swept;
    private ?string $timer = null;

    public function __construct(private readonly Driver $driver)
    {
        $this->swept = (int) \floor($driver->now() / self::RESOLUTION);
    }

    /**
     * Arms (or moves) the deadline of $key to $seconds from now; $onExpire runs once when it passes (an
     * Expiring: its expired()).
     */
    public function arm(int $key, float $seconds, \Closure|Expiring $onExpire): void
    {
        // Never into a slot already swept (a callback re-arming during a sweep): it would never fire.
        // The loop's time of this tick: precise enough for 0.1 s slots, and no clock read per request.
        $slot = \max($this->swept + 1, (int) \ceil(($this->driver->now() + $seconds) / self::RESOLUTION));
        $old = $this->slotOf[$key] ?? null;
        if ($old !== $slot) {
            if ($old !== null) {
                unset($this->slots[$old][$key]);
            }
            $this->slotOf[$key] = $slot;
        }
        $this->slots[$slot][$key] = $onExpire;
        if ($this->timer === null) {
            $this->swept = \max($this->swept, (int) \floor($this->driver->now() / self::RESOLUTION));
            $this->timer = $this->driver->repeat(self::RESOLUTION, $this->sweep(...));
            $this->driver->unreference($this->timer);
        }
    }

    public function disarm(int $key): void
    {
        $slot = $this->slotOf[$key] ?? null;
        if ($slot !== null) {
            unset($this->slots[$slot][$key], $this->slotOf[$key]);
        }
    }

    public function isArmed(int $key): bool
    {
        return isset($this->slotOf[$key]);
    }

    public function count(): int
    {
        return \count($this->slotOf);
    }

    private function sweep(): void
    {
        $now = (int) \floor($this->driver->now() / self::RESOLUTION);
        for ($slot = $this->swept + 1; $slot <= $now; $slot++) {
            $this->swept = $slot;
            if (!isset($this->slots[$slot])) {
                continue;
            }
            $due = $this->slots[$slot];
            unset($this->slots[$slot]);
            foreach ($due as $key => $callback) {
                // A callback may have disarmed or moved a later key of this slot (never into this slot,
                // swept already: what $due says of a key still in it is current).
                if (($this->slotOf[$key] ?? null) !== $slot) {
                    continue;
                }
                unset($this->slotOf[$key]);
                $callback instanceof Expiring ? $callback->expired() : $callback();
            }
        }
        $this->swept = \max($this->swept, $now);
        if ($this->slotOf === [] && $this->timer !== null) {
            $this->driver->cancel($this->timer);
            $this->timer = null;
            $this->slots = [];
        }
    }
}
