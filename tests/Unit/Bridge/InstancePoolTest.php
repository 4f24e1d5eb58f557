<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Bridge;

use PHPUnit\Framework\TestCase;
use Weft\Bridge\InstancePool;
use Weft\Coroutine\StateSet;

final class InstancePoolTest extends TestCase
{
    protected function setUp(): void
    {
        // What earlier tests left does not count towards the thresholds below.
        \gc_collect_cycles();
    }

    protected function tearDown(): void
    {
        \gc_enable();
        \gc_collect_cycles();
    }

    public function testAPoolOfSeveralCollectsCyclesItselfAfterMoreRoots(): void
    {
        $pool = new InstancePool(static fn (): \stdClass => new \stdClass(), 8, StateSet::capture());
        $pool->warm();
        self::assertFalse(\gc_enabled(), 'PHP\'s own collector (every 10,000 roots) is off');

        // 30,000 garbage cycles: past PHP's threshold, under the pool's (4 x 10,000).
        self::makeCycles(30_000);
        $pool->release($pool->acquire());
        self::assertGreaterThanOrEqual(30_000, \gc_status()['roots']);

        self::makeCycles(15_000);
        $runs = \gc_status()['runs'];
        $pool->release($pool->acquire());
        // One collection (PHP counts a second run when destructors ran in the first).
        self::assertGreaterThan($runs, \gc_status()['runs'], 'collected past 40,000 roots, between two requests');
        self::assertLessThan(10_000, \gc_status()['roots']);
    }

    public function testAPoolOfOneLeavesTheCollectorAlone(): void
    {
        $pool = new InstancePool(static fn (): \stdClass => new \stdClass(), 1, StateSet::capture());
        $pool->warm();
        self::assertTrue(\gc_enabled());
    }

    private static function makeCycles(int $count): void
    {
        for ($i = 0; $i < $count; $i++) {
            $a = new \stdClass();
            $a->self = $a;
            unset($a);
        }
    }
}
