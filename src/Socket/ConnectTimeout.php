<?php

declare(strict_types=1);

namespace Weft\Socket;

/** The connection was not established within the connect timeout (errno ETIMEDOUT). */
final class ConnectTimeout extends ConnectException implements \Weft\TimeoutException
{
    public static function after(string $address, float $seconds): self
    {
        return new self(\sprintf('Connecting to "%s" timed out after %s s (ETIMEDOUT)', $address, \round($seconds, 3)), 110);
    }
}
