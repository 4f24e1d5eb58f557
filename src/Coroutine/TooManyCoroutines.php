<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/** The per-process coroutine cap was reached, or the kernel refused another Fiber stack. */
final class TooManyCoroutines extends \RuntimeException implements \Weft\WeftException
{
    public static function limit(int $max): self
    {
        return new self(
            "Too many coroutines: $max are alive in this process (the configured limit). "
            . 'Each holds a Fiber stack: two kernel memory mappings (vm.max_map_count, 65530 by default) '
            . 'and ~10 KB of memory',
        );
    }

    public static function allocation(\Throwable $previous, int $live): self
    {
        return new self(
            "Cannot create another Fiber with $live coroutines alive: " . $previous->getMessage()
            . ' (raise vm.max_map_count, or lower the coroutine limit)',
            0,
            $previous,
        );
    }
}
