<?php

declare(strict_types=1);

namespace Weft\Socket;

/**
 * A connection could not be established: refused, unreachable, not resolved, the TLS or the protocol's
 * handshake failed, or (ConnectTimeout) it took too long. The one "connect failed" of Weft: every
 * client throws it or a subclass of it. The message names the address and, where there is one, the errno.
 */
class ConnectException extends SocketException
{
    public static function failed(string $address, int $errno, string $error): static
    {
        return new static(\sprintf('Failed to connect to "%s": %s', $address, Errno::describe($errno, $error)), $errno);
    }

    /** @param string $what the peer, in words ("Redis at 127.0.0.1:6379") */
    public static function because(string $what, \Throwable $reason): static
    {
        $code = $reason->getCode();
        return new static(\sprintf('Cannot connect to %s: %s', $what, $reason->getMessage()), \is_int($code) ? $code : 0, $reason);
    }
}
