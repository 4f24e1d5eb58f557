<?php

declare(strict_types=1);

namespace Weft\Client\Http;

use Weft\Client\Http\Internal\FailedRequest;

/** More redirects than RequestOptions::$maxRedirects allows (a loop, most likely). */
final class TooManyRedirects extends \RuntimeException implements RequestFailed
{
    use FailedRequest;

    /** @param list<string> $chain the URLs visited, first to last */
    public static function after(string $method, string $url, int $limit, array $chain): self
    {
        return (new self(\sprintf('%s %s: more than %d redirects (%s)', $method, $url, $limit, \implode(' -> ', $chain))))
            ->describing($method, $url);
    }
}
