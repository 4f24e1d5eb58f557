<?php

declare(strict_types=1);

namespace Weft\Client\Http;

/** The call (connect, send, response, redirects) did not finish within the request timeout. */
final class RequestTimeout extends RequestFailed implements TimeoutException
{
    public static function after(string $method, string $url, float $seconds, ?\Throwable $previous = null): self
    {
        return new self(
            \sprintf('%s %s timed out after %s s', $method, $url, \rtrim(\rtrim(\number_format($seconds, 3, '.', ''), '0'), '.')),
            $method,
            $url,
            $previous,
        );
    }
}
