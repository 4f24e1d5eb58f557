<?php

declare(strict_types=1);

namespace Weft\Socket;

/** The connection is gone: closed by us, by the peer (EOF, ECONNRESET) or broken (EPIPE). */
final class ConnectionClosed extends ConnectionLost
{
    public static function byPeer(string $while): self
    {
        return new self("Connection closed by the peer while $while");
    }

    public static function local(string $while): self
    {
        return new self("Cannot $while: the connection is closed");
    }

    public static function broken(string $while, string $reason): self
    {
        return new self("Connection broken while $while: $reason");
    }
}
