<?php

declare(strict_types=1);

namespace Weft\WebSocket;

use Weft\WeftException;

/** The peer broke RFC 6455 (or a limit): the connection is failed with $closeCode. */
final class ProtocolError extends \RuntimeException implements WeftException
{
    private function __construct(string $message, public readonly int $closeCode)
    {
        parent::__construct($message);
    }

    public static function protocol(string $reason): self
    {
        return new self($reason, CloseCode::PROTOCOL_ERROR);
    }

    public static function invalidUtf8(string $what): self
    {
        return new self("invalid UTF-8 in $what", CloseCode::INVALID_DATA);
    }

    public static function tooBig(int $limit): self
    {
        return new self("message over the $limit-byte limit", CloseCode::TOO_BIG);
    }
}
