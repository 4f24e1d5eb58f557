<?php

declare(strict_types=1);

namespace Weft\Client\Redis\Internal;

/**
 * Shared by Pipeline and Transaction: commands are recorded, not sent; the Connection sends them all
 * in one write afterwards.
 *
 * @internal
 */
trait Queue
{
    /** @var list<array{array<int, string|int|float>, ?string, ?float}> */
    private array $queued = [];

    /** Queues any command; its reply appears in the result array. */
    public function command(string|int|float ...$args): void
    {
        if ($args === []) {
            throw new \ArgumentCountError('command() needs at least the command name');
        }
        $this->queued[] = [\array_values($args), null, null];
    }

    /** @internal */
    public function call(array $args, ?string $decode = null, ?float $block = null): mixed
    {
        $this->queued[] = [$args, $decode, $block];
        return null;
    }

    /** How many commands are queued. */
    public function count(): int
    {
        return \count($this->queued);
    }

    /**
     * @internal
     * @return list<array{array<int, string|int|float>, ?string, ?float}>
     */
    public function takeQueued(): array
    {
        $queued = $this->queued;
        $this->queued = [];
        return $queued;
    }
}
