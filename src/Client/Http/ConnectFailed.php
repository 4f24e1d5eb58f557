<?php

declare(strict_types=1);

namespace Weft\Client\Http;

use Weft\Client\Http\Internal\FailedRequest;
use Weft\Socket\ConnectException;

/** No connection: refused, unreachable, name not resolved, or the TLS handshake failed. */
final class ConnectFailed extends ConnectException implements RequestFailed
{
    use FailedRequest;

    public static function opening(string $method, string $url, \Throwable $reason): self
    {
        return (new self(\sprintf('%s %s: %s', $method, $url, $reason->getMessage()), (int) $reason->getCode(), $reason))
            ->describing($method, $url);
    }
}
