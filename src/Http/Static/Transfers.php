<?php

declare(strict_types=1);

namespace Weft\Http\Static;

/** @internal The streamed file transfers in flight in one worker, counted by their producers. */
final class Transfers
{
    public int $inFlight = 0;

    /** The chunk size for the next read: the configured one, or a fair share of the budget when crowded. */
    public function chunkSize(StaticOptions $options): int
    {
        return \min($options->chunkSize, \max(StaticOptions::MIN_CHUNK_SIZE, \intdiv($options->streamBudget, \max(1, $this->inFlight))));
    }
}
