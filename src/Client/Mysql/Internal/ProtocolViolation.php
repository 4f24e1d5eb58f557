<?php

declare(strict_types=1);

namespace Weft\Client\Mysql\Internal;

/**
 * The bytes from the server do not fit the protocol (wrong sequence id, truncated or unexpected
 * packet). The stream cannot be trusted any more; Connection turns this into ConnectionLost.
 *
 * @internal
 */
final class ProtocolViolation extends \RuntimeException implements \Weft\WeftException
{
    public static function sequence(int $expected, int $got): self
    {
        return new self(\sprintf('packet out of order (sequence id %d, expected %d)', $got, $expected));
    }

    public static function unexpected(string $what, string $packet): self
    {
        return new self(\sprintf(
            'unexpected packet %s (%d bytes, starts with 0x%s)',
            $what,
            \strlen($packet),
            \bin2hex(\substr($packet, 0, 8)),
        ));
    }

    public static function truncated(string $what): self
    {
        return new self("truncated $what");
    }
}
