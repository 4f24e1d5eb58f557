<?php

declare(strict_types=1);

namespace Weft;

/**
 * The one timeout family: every "this took too long" Weft throws (Coroutine\Timeout from timeout() and
 * every wait with a deadline, Server\RequestTimeout, each client's connect and request timeouts)
 * implements it, so one catch handles them all.
 */
interface TimeoutException extends WeftException
{
}
