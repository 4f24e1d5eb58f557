<?php

declare(strict_types=1);

namespace Weft\Socket;

/** A connection could not be established. The message names the address and the errno. */
class ConnectException extends SocketException
{
    public static function failed(string $address, int $errno, string $error): static
    {
        return new static(\sprintf('Failed to connect to "%s": %s', $address, Errno::describe($errno, $error)), $errno);
    }
}
