<?php

declare(strict_types=1);

namespace Weft;

/**
 * Marks every exception Weft throws, so an application can tell Weft's failures (timeouts, closed
 * connections, protocol and client errors) from its own with one catch. Programmer errors (\Error
 * subclasses such as DeadlockError) carry it too: it is a marker, not a base class.
 */
interface WeftException extends \Throwable
{
}
