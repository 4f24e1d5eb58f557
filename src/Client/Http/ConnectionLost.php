<?php

declare(strict_types=1);

namespace Weft\Client\Http;

/** The server closed or reset the connection before the response was complete. */
final class ConnectionLost extends RequestFailed
{
    public static function because(string $method, string $url, string $why, ?\Throwable $previous = null): self
    {
        return new self(\sprintf('%s %s: %s', $method, $url, $why), $method, $url, $previous);
    }
}
