<?php

declare(strict_types=1);

namespace Weft\Server;

/**
 * What a worker's long-lived connections (WebSockets after their upgrade) may hold of its memory while
 * they are open, each charged what an idle one of its kind costs. A connection that would take the
 * worker past the budget is refused when it asks (a 503 to the WebSocket handshake), so a crowd of idle
 * connections meets a clear refusal instead of the memory limit, which would end the worker and every
 * connection on it without a close frame. One per worker.
 */
final class ConnectionBudget
{
    /** Bytes charged now, summed over the open connections. */
    public int $charged = 0;
    /** Connections charged now. */
    public int $count = 0;
    /** Refusals for a log line of one per 10 s at most. */
    private readonly Internal\Refusals $refusals;

    /** @param int $limit bytes; 0: no budget */
    public function __construct(public readonly int $limit)
    {
        if ($limit < 0) {
            throw new \InvalidArgumentException('A connection budget cannot be negative');
        }
        $this->refusals = new Internal\Refusals();
    }

    /**
     * The default budget of a worker whose application has loaded: half of PHP's memory_limit less what
     * the worker holds now (the other half is ReceiveBudget's, for input being received), and at least
     * an eighth of it, so an application that is large for its limit still takes some connections.
     * 0 (no budget) without a memory limit.
     */
    public static function forMemoryLimit(int $memoryLimit, int $held): self
    {
        if ($memoryLimit <= 0) {
            return new self(0);
        }
        return new self(\max(\intdiv($memoryLimit, 2) - $held, \intdiv($memoryLimit, 8)));
    }

    /** Whether a connection costing $bytes fits now. */
    public function fits(int $bytes): bool
    {
        return $this->limit === 0 || $this->charged + $bytes <= $this->limit;
    }

    public function charge(int $bytes): void
    {
        $this->charged += $bytes;
        $this->count++;
    }

    public function release(int $bytes): void
    {
        $this->charged -= $bytes;
        $this->count--;
    }

    /** Counts a refusal; the number refused since the last log line when one is due now, else null. */
    public function refused(): ?int
    {
        return $this->refusals->add();
    }
}
