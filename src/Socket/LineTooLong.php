<?php

declare(strict_types=1);

namespace Weft\Socket;

/** readLine() found no line ending within its limit. The bytes stay buffered; the caller decides. */
final class LineTooLong extends SocketException
{
    public static function limit(int $max): self
    {
        return new self("Line exceeds the limit of $max bytes");
    }
}
