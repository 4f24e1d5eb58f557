<?php

declare(strict_types=1);

namespace Weft\Socket;

/**
 * The connection was not established within the connect timeout (errno ETIMEDOUT). The one "connect
 * timed out" of Weft: Socket::connect() and every client's connect (TCP, TLS, the protocol's handshake)
 * throw it or a subclass of it; catch ConnectException for every connect failure, timeouts included.
 */
class ConnectTimeout extends ConnectException implements \Weft\TimeoutException
{
    /** @param string $while what the connect was waiting for when time ran out ("" for the TCP connect itself) */
    public static function after(string $address, float $seconds, string $while = '', ?\Throwable $previous = null): static
    {
        return new static(
            \sprintf('Connecting to "%s" timed out after %s s%s (ETIMEDOUT)', $address, \round($seconds, 3), $while === '' ? '' : " $while"),
            110,
            $previous,
        );
    }
}
