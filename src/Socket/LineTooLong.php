<?php

declare(strict_types=1);

namespace Weft\Socket;

/**
 * A line longer than the limit: Socket::readLine() found no line ending within it (the bytes stay
 * buffered; the caller decides), or a line-protocol peer sent one (it gets an error reply and is closed).
 */
final class LineTooLong extends SocketException
{
    public static function limit(int $max): self
    {
        return new self("line too long (limit $max bytes)");
    }
}
