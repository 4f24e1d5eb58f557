<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\Coroutine\Timeout;

/** A request ran longer than --max-request-time: its waits throw this, and it is answered 504. */
final class RequestTimeout extends Timeout
{
}
