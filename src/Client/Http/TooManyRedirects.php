<?php

declare(strict_types=1);

namespace Weft\Client\Http;

/** More redirects than RequestOptions::$maxRedirects allows (a loop, most likely). */
final class TooManyRedirects extends RequestFailed
{
    /** @param list<string> $chain the URLs visited, first to last */
    public static function after(string $method, string $url, int $limit, array $chain): self
    {
        return new self(
            \sprintf('%s %s: more than %d redirects (%s)', $method, $url, $limit, \implode(' -> ', $chain)),
            $method,
            $url,
        );
    }
}
