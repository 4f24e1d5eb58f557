<?php

declare(strict_types=1);

namespace Weft\Client\Pgsql;

/** The connection setup (TCP, TLS, authentication) did not finish within the connect timeout. */
final class ConnectTimeout extends ConnectException implements \Weft\TimeoutException
{
    public static function after(string $address, float $seconds): self
    {
        return new self(\sprintf('Connecting to PostgreSQL at %s timed out after %s s', $address, \round($seconds, 3)), 110);
    }
}
