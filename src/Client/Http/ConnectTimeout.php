<?php

declare(strict_types=1);

namespace Weft\Client\Http;

/** The connection (TCP and TLS) was not established within the connect timeout. */
final class ConnectTimeout extends ConnectFailed implements TimeoutException
{
    public static function after(string $method, string $url, float $seconds, ?\Throwable $previous = null): self
    {
        return new self(\sprintf('%s %s: connecting timed out after %s s', $method, $url, self::seconds($seconds)), $method, $url, $previous, 110);
    }

    private static function seconds(float $seconds): string
    {
        return \rtrim(\rtrim(\number_format($seconds, 3, '.', ''), '0'), '.');
    }
}
