<?php

declare(strict_types=1);

namespace Weft\Pool;

/** The pool was closed: it hands out no more connections. */
final class PoolClosed extends \RuntimeException implements \Weft\WeftException
{
    public static function borrow(): self
    {
        return new self('Cannot borrow a connection: the pool is closed');
    }

    public static function whileWaiting(): self
    {
        return new self('The pool was closed while waiting for a connection');
    }
}
