<?php

declare(strict_types=1);

namespace Weft\WebSocket;

/** One complete message (all its fragments joined): text (valid UTF-8) or binary. */
final class Message implements \Stringable
{
    public function __construct(public readonly string $data, public readonly bool $binary = false)
    {
    }

    public function isText(): bool
    {
        return !$this->binary;
    }

    public function __toString(): string
    {
        return $this->data;
    }
}
