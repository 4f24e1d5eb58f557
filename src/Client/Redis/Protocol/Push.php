<?php

declare(strict_types=1);

namespace Weft\Client\Redis\Protocol;

/** RESP3 out-of-band data (">"): pub/sub messages, client-side caching invalidations, ... */
final class Push
{
    /** @param list<mixed> $data every element after the kind */
    public function __construct(public readonly string $kind, public readonly array $data)
    {
    }
}
