<?php

declare(strict_types=1);

namespace Weft\Loop;

/** A programmer error: a watcher id that this driver does not know (never created, or already cancelled). */
final class InvalidWatcher extends \Error implements \Weft\WeftException
{
    public static function unknown(string $id): self
    {
        return new self("Unknown watcher id '$id' (never created, or already cancelled)");
    }
}
