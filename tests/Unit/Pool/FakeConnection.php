<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Pool;

/** A stand-in connection: a plain object that remembers what the pool did to it. */
final class FakeConnection
{
    public bool $closed = false;
    public bool $healthy = true;
    public bool $busy = false;
    public int $checks = 0;

    public function __construct(public readonly int $number)
    {
    }
}
