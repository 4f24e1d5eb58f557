<?php

declare(strict_types=1);

namespace Weft\Line;

/** A peer sent a line longer than the limit: it gets an error reply and the connection is closed. */
final class LineTooLongError extends \RuntimeException implements \Weft\WeftException
{
    public static function limit(int $max): self
    {
        return new self("line too long (limit $max bytes)");
    }
}
