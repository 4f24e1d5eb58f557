<?php

declare(strict_types=1);

namespace Weft\WebSocket;

use Weft\WeftException;

/** A WebSocket used the wrong way by the application (a programming error, not a network fault). */
final class WebSocketError extends \LogicException implements WeftException
{
}
