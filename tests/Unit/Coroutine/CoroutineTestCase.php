<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Coroutine;

use PHPUnit\Framework\TestCase;
use Weft\Loop\Loop;

/** Every test gets a fresh loop (and so a fresh scheduler), as a forked worker would. */
abstract class CoroutineTestCase extends TestCase
{
    protected function setUp(): void
    {
        Loop::reset('select');
    }

    protected function tearDown(): void
    {
        Loop::reset('select');
    }
}
