<?php

declare(strict_types=1);

namespace Weft\Client\Redis\Internal;

/**
 * scanAll() for what runs a command at once (Connection, Pool), not for what queues it (Pipeline,
 * Transaction: a SCAN there returns no cursor to go on from).
 *
 * @internal
 */
trait ScanAll
{
    /**
     * Iterates over every key (SCAN until the cursor comes back to "0"). Keys added or removed meanwhile
     * may or may not be seen; a key may be yielded twice.
     *
     * @return \Generator<int, string>
     */
    public function scanAll(?string $match = null, int $count = 100): \Generator
    {
        $cursor = '0';
        do {
            [$cursor, $keys] = $this->scan($cursor, $match, $count);
            yield from $keys;
        } while ($cursor !== '0');
    }
}
