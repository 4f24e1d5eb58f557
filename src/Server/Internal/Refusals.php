<?php

declare(strict_types=1);

namespace Weft\Server\Internal;

/**
 * Counts refusals for a log line of at most one per interval: a crowd or a flood is many refusals,
 * and each would otherwise be a line.
 *
 * @internal
 */
final class Refusals
{
    private int $count = 0;
    private float $logged = 0.0;

    public function __construct(private readonly float $interval = 10.0)
    {
    }

    /** Counts one; the number counted since the last line when a line is due now, else null. */
    public function add(): ?int
    {
        $this->count++;
        $now = \microtime(true);
        if ($now - $this->logged < $this->interval) {
            return null;
        }
        $count = $this->count;
        $this->count = 0;
        $this->logged = $now;
        return $count;
    }
}
