<?php

declare(strict_types=1);

namespace Weft;

// The weft extension declares this same interface (so that its own exceptions, Weft\Ext\ExitException
// and Weft\Ext\EpollException, carry it too); with the extension loaded this file is not autoloaded, and
// if something includes it anyway (a preload script) it must not declare the interface twice.
if (!\interface_exists(WeftException::class, false)) {
    /**
     * Marks every exception Weft throws, so an application can tell Weft's failures (timeouts, closed
     * connections, protocol and client errors) from its own with one catch. Programmer errors (\Error
     * subclasses such as DeadlockError) carry it too: it is a marker, not a base class.
     */
    interface WeftException extends \Throwable
    {
    }
}
