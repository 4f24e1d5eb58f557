<?php

declare(strict_types=1);

namespace Weft\Socket;

/** A listening socket could not be created. The message names the address and the errno. */
final class ListenException extends SocketException
{
    public static function failed(string $address, int $errno, string $error): self
    {
        return new self(\sprintf('Failed to listen on "%s": %s', $address, Errno::describe($errno, $error)), $errno);
    }
}
