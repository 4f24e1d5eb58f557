<?php

declare(strict_types=1);

namespace Weft\Client\Http;

use Weft\Client\Http\Internal\FailedRequest;

/** The server closed or reset the connection before the response was complete. */
final class ConnectionLost extends \Weft\Socket\ConnectionLost implements RequestFailed
{
    use FailedRequest;

    public static function because(string $method, string $url, string $why, ?\Throwable $previous = null): self
    {
        return (new self(\sprintf('%s %s: %s', $method, $url, $why), 0, $previous))->describing($method, $url);
    }
}
