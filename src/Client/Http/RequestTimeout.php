<?php

declare(strict_types=1);

namespace Weft\Client\Http;

use Weft\Client\Http\Internal\FailedRequest;
use Weft\Coroutine\Timeout;

/**
 * The call (connect, send, response, redirects) did not finish within the request timeout. A
 * Coroutine\Timeout (the one timeout class) naming the call; it carries no token, so no enclosing
 * Weft\timeout() mistakes it for its own.
 */
final class RequestTimeout extends Timeout implements RequestFailed, TimeoutException
{
    use FailedRequest;

    public static function of(string $method, string $url, float $seconds, ?\Throwable $previous = null): self
    {
        return (new self(\sprintf('%s %s timed out after %s s', $method, $url, Timeout::seconds($seconds)), 0, $previous))
            ->describing($method, $url);
    }
}
