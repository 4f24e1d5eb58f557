<?php

declare(strict_types=1);

namespace Weft\Pool;

use Weft\Coroutine\Timeout;

/** No connection became free in time (or, outside of a coroutine, none was free at all). */
final class PoolExhausted extends \RuntimeException implements \Weft\WeftException
{
    public static function afterWaiting(float $seconds, int $max, int $inUse, int $waiting): self
    {
        return new self(\sprintf(
            'No connection became free within %s s (max %d, in use %d, waiting %d); '
            . 'raise the pool size or the borrow timeout, or hold connections for less time',
            Timeout::seconds($seconds),
            $max,
            $inUse,
            $waiting,
        ));
    }

    public static function withoutWaiting(int $max, int $inUse, int $waiting): self
    {
        return new self(\sprintf(
            'No connection is free and the pool is at its maximum (max %d, in use %d, waiting %d); '
            . 'outside of a coroutine nothing else can release one, so borrow() does not wait',
            $max,
            $inUse,
            $waiting,
        ));
    }
}
