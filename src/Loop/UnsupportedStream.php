<?php

declare(strict_types=1);

namespace Weft\Loop;

/** The driver cannot watch this stream: select(2) is limited to descriptors below FD_SETSIZE (1024). */
final class UnsupportedStream extends \RuntimeException implements \Weft\WeftException
{
    public static function tooHigh(string $driver): self
    {
        return new self(
            "The $driver loop cannot watch a descriptor numbered 1024 or above (FD_SETSIZE); "
            . 'use the epoll loop (--loop epoll) for more connections',
        );
    }
}
