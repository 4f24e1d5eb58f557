<?php

declare(strict_types=1);

namespace Weft\Socket;

/**
 * An established connection is gone: closed or reset by the peer, broken, or left unusable. The one
 * "connection lost" of Weft: the socket's own ConnectionClosed and each client's ConnectionLost (which
 * adds whether the command may be sent again) extend it, so one catch handles them all.
 */
abstract class ConnectionLost extends SocketException
{
}
