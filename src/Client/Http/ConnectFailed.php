<?php

declare(strict_types=1);

namespace Weft\Client\Http;

/** No connection: refused, unreachable, name not resolved, or the TLS handshake failed. */
class ConnectFailed extends RequestFailed
{
    public static function because(string $method, string $url, \Throwable $reason): static
    {
        return new static(\sprintf('%s %s: %s', $method, $url, $reason->getMessage()), $method, $url, $reason, (int) $reason->getCode());
    }
}
