<?php

declare(strict_types=1);

namespace Weft\Client\Redis\Protocol;

/** The bytes received are not RESP. The connection is out of sync and is closed. */
final class ProtocolError extends \RuntimeException implements \Weft\WeftException
{
    public static function unexpected(string $bytes, int $offset): self
    {
        return new self(\sprintf(
            'Invalid RESP data at offset %d: %s',
            $offset,
            \json_encode(\substr($bytes, $offset, 32), \JSON_INVALID_UTF8_SUBSTITUTE) ?: '?',
        ));
    }
}
