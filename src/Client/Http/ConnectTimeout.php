<?php

declare(strict_types=1);

namespace Weft\Client\Http;

use Weft\Client\Http\Internal\FailedRequest;
use Weft\Coroutine\Timeout;

/** The connection (TCP and TLS) was not established within the connect timeout. */
final class ConnectTimeout extends \Weft\Socket\ConnectTimeout implements RequestFailed, TimeoutException
{
    use FailedRequest;

    public static function opening(string $method, string $url, float $seconds, ?\Throwable $previous = null): self
    {
        return (new self(\sprintf('%s %s: connecting timed out after %s s', $method, $url, Timeout::seconds($seconds)), 110, $previous))
            ->describing($method, $url);
    }
}
