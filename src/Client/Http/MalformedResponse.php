<?php

declare(strict_types=1);

namespace Weft\Client\Http;

use Weft\Client\Http\Internal\FailedRequest;

/** The server answered with something that is not acceptable HTTP/1.x (or a body that does not decode). */
final class MalformedResponse extends \RuntimeException implements RequestFailed
{
    use FailedRequest;

    public static function because(string $method, string $url, string $why, ?\Throwable $previous = null): self
    {
        return (new self(\sprintf('%s %s: malformed response: %s', $method, $url, $why), 0, $previous))->describing($method, $url);
    }
}
