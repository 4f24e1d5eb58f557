<?php

declare(strict_types=1);

namespace Weft\Client\Pgsql;

/**
 * No connection could be established: refused, unreachable, authentication failed, timed out. The
 * message carries libpq's own explanation.
 */
class ConnectException extends \Weft\Socket\ConnectException
{
    public static function libpq(string $address, string $message): static
    {
        return new static(\sprintf('Failed to connect to PostgreSQL at %s: %s', $address, \trim($message)));
    }
}
