<?php

declare(strict_types=1);

namespace Weft\Http2;

use Weft\Socket\ConnectionClosed;

/**
 * What a stream's coroutine sees when the client resets its stream (RST_STREAM) or the connection
 * ends: the wait it is in throws this, as a connection closed under an HTTP/1.1 request does, so the
 * code that handles a vanished client handles both.
 *
 * @internal
 */
final class StreamReset
{
    public static function byPeer(int $stream): ConnectionClosed
    {
        return ConnectionClosed::byPeer("HTTP/2 stream $stream (reset by the client)");
    }
}
