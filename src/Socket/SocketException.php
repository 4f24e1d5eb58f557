<?php

declare(strict_types=1);

namespace Weft\Socket;

/** Base of every runtime socket failure. */
class SocketException extends \RuntimeException implements \Weft\WeftException
{
}
