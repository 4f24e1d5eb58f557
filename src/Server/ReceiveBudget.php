<?php

declare(strict_types=1);

namespace Weft\Server;

/**
 * What a worker holds of input its peers are still sending or the application has not taken yet (HTTP
 * request heads and bodies, WebSocket frames and fragmented messages being assembled), against one
 * budget: half of --memory-limit. Past it, a connection in the middle of receiving something large is
 * refused, so input alone never takes a worker past its memory limit (which would end every request and
 * connection on it), and a request already in the application is never cut for it. One per worker,
 * shared by every protocol the worker speaks.
 */
final class ReceiveBudget
{
    /** Over the budget, only a connection holding at least this much is refused: small requests still pass. */
    public const REFUSE_FROM = 4096;

    /** Bytes held now, summed over the worker's connections (each keeps its own share up to date). */
    public int $held = 0;
    /** Refusals for a log line of one per 10 s at most. */
    private readonly Internal\Refusals $refusals;

    /** @param int $limit bytes; 0: no budget */
    public function __construct(public readonly int $limit)
    {
        $this->refusals = new Internal\Refusals();
    }

    /** Moves a connection's share from $before to $after bytes; true when that connection is to be refused. */
    public function update(int $before, int $after): bool
    {
        $this->held += $after - $before;
        return $this->limit > 0 && $after >= self::REFUSE_FROM && $this->held > $this->limit;
    }

    /** Counts a refusal; the number refused since the last log line when one is due now, else null. */
    public function refused(): ?int
    {
        return $this->refusals->add();
    }
}
