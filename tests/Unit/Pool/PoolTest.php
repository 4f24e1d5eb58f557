<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Pool;

use PHPUnit\Framework\TestCase;
use Weft\Coroutine\Timeout;
use Weft\Coroutine\WaitGroup;
use Weft\Pool\PoolClosed;
use Weft\Pool\PoolExhausted;
use Weft\Pool\PoolOptions;

use function Weft\go;
use function Weft\run;
use function Weft\sleep;

final class PoolTest extends TestCase
{
    private FakeFactory $factory;

    protected function setUp(): void
    {
        $this->factory = new FakeFactory();
    }

    public function testOptionsDefaultsAndValidation(): void
    {
        $o = PoolOptions::defaults();
        self::assertSame([0, 10, 5.0, 60.0, 1.0], [$o->min, $o->max, $o->borrowTimeout, $o->idleTimeout, $o->checkAfterIdle]);
        $o2 = $o->withMax(3)->withMin(2)->withBorrowTimeout(0.5)->withIdleTimeout(2.0)->withCheckAfterIdle(0.0);
        self::assertSame([2, 3, 0.5, 2.0, 0.0], [$o2->min, $o2->max, $o2->borrowTimeout, $o2->idleTimeout, $o2->checkAfterIdle]);
        self::assertSame(10, $o->max, 'withX() returns a copy');

        $this->expectException(\InvalidArgumentException::class);
        $this->factory->pool(PoolOptions::defaults()->withMax(2)->withMin(3));
    }

    public function testInvalidOptionValues(): void
    {
        foreach ([
            static fn () => PoolOptions::defaults()->withMax(0),
            static fn () => PoolOptions::defaults()->withMin(-1),
            static fn () => PoolOptions::defaults()->withBorrowTimeout(-1.0),
            static fn () => PoolOptions::defaults()->withIdleTimeout(-1.0),
            static fn () => PoolOptions::defaults()->withCheckAfterIdle(-1.0),
        ] as $i => $make) {
            try {
                $make();
                self::fail("case $i accepted an invalid value");
            } catch (\InvalidArgumentException) {
                self::assertTrue(true);
            }
        }
    }

    public function testNothingIsOpenedBeforeFirstUseAndConnectionsAreReused(): void
    {
        $pool = $this->factory->pool();
        self::assertSame(0, $this->factory->attempts);

        $a = $pool->borrow();
        $pool->release($a);
        $b = $pool->borrow();
        self::assertSame($a, $b, 'the idle connection is reused');
        $pool->release($b);
        self::assertSame(1, $pool->stats()['created']);
    }

    public function testMostRecentlyReleasedIsReusedFirst(): void
    {
        $pool = $this->factory->pool();
        $a = $pool->borrow();
        $b = $pool->borrow();
        $pool->release($a);
        $pool->release($b);
        self::assertSame($b, $pool->borrow());
    }

    public function testSyncModeOpensUpToMaxThenFailsAtOnce(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withMax(2)->withBorrowTimeout(30.0));
        $a = $pool->borrow();
        $b = $pool->borrow();
        self::assertNotSame($a, $b);

        $started = \hrtime(true);
        try {
            $pool->borrow();
            self::fail('a third borrow must fail');
        } catch (PoolExhausted $e) {
            self::assertStringContainsString('max 2, in use 2, waiting 0', $e->getMessage());
        }
        self::assertLessThan(5.0, (\hrtime(true) - $started) / 1e9, 'sync mode never waits for the borrow timeout');

        $pool->release($a);
        self::assertSame($a, $pool->borrow());
    }

    public function testMinConnectionsAreOpenedOnFirstUseAndSurviveIdleEviction(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withMin(3)->withMax(5)->withIdleTimeout(0.01));
        self::assertSame(0, $pool->stats()['total']);

        $a = $pool->borrow();
        $stats = $pool->stats();
        self::assertSame([1, 2, 3], [$stats['in_use'], $stats['idle'], $stats['total']]);
        $pool->release($a);

        sleep(0.05);
        $pool->release($pool->borrow());
        $stats = $pool->stats();
        self::assertSame(3, $stats['total'], 'min connections are kept through idle eviction');
        self::assertSame(0, $stats['evicted']);
        self::assertSame(3, $stats['created']);
    }

    public function testIdleConnectionsBeyondMinAreEvicted(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withMin(1)->withMax(5)->withIdleTimeout(0.05));
        $held = [$pool->borrow(), $pool->borrow(), $pool->borrow()];
        foreach ($held as $c) {
            $pool->release($c);
        }
        self::assertSame(3, $pool->stats()['idle']);

        sleep(0.2);
        $c = $pool->borrow();
        $stats = $pool->stats();
        self::assertSame(2, $stats['evicted']);
        self::assertSame(1, $stats['total']);
        self::assertFalse($c->closed);
        self::assertCount(2, \array_filter($this->factory->made, static fn (FakeConnection $x) => $x->closed));
        $pool->release($c);
    }

    public function testIdleConnectionsWithinTheTimeoutAreKept(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withIdleTimeout(60.0));
        $a = $pool->borrow();
        $b = $pool->borrow();
        $pool->release($a);
        $pool->release($b);
        sleep(0.02);
        $pool->release($pool->borrow());
        self::assertSame(2, $pool->stats()['total']);
        self::assertSame(0, $pool->stats()['evicted']);
    }

    public function testHealthCheckRunsOnlyAfterTheIdleThreshold(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withCheckAfterIdle(60.0));
        $a = $pool->borrow();
        $pool->release($a);
        $pool->release($pool->borrow());
        self::assertSame(0, $a->checks, 'a connection idle for less than checkAfterIdle is not checked');

        $pool = $this->factory->pool(PoolOptions::defaults()->withCheckAfterIdle(0.01));
        $b = $pool->borrow();
        self::assertSame(0, $b->checks, 'a new connection is not checked');
        $pool->release($b);
        sleep(0.03);
        self::assertSame($b, $pool->borrow());
        self::assertSame(1, $b->checks);
    }

    public function testFailedHealthCheckDiscardsAndTriesTheNextOne(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withCheckAfterIdle(0.0));
        $a = $pool->borrow();
        $b = $pool->borrow();
        $pool->release($a);
        $pool->release($b);
        $b->healthy = false;
        sleep(0.001);

        self::assertSame($a, $pool->borrow(), 'b (most recent) failed its check; a is next');
        self::assertTrue($b->closed);
        self::assertSame(1, $pool->stats()['discarded']);

        $a->healthy = false;
        $pool->release($a);
        sleep(0.001);
        $c = $pool->borrow();
        self::assertNotSame($a, $c, 'nothing healthy left: a new connection is opened');
        self::assertTrue($a->closed);
        self::assertSame(3, $pool->stats()['created']);
        self::assertSame(1, $pool->stats()['total']);
    }

    public function testAThrowingHealthCheckCountsAsFailed(): void
    {
        $pool = new \Weft\Pool\Pool(
            $this->factory->connect(...),
            static function (FakeConnection $c): void {
                $c->closed = true;
            },
            static fn (FakeConnection $c): bool => throw new \RuntimeException('PING failed'),
            PoolOptions::defaults()->withCheckAfterIdle(0.0),
        );
        $a = $pool->borrow();
        $pool->release($a);
        sleep(0.001);
        self::assertNotSame($a, $pool->borrow());
        self::assertTrue($a->closed);
    }

    public function testDiscardedConnectionIsClosedAndNeverHandedOutAgain(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withMax(1));
        $a = $pool->borrow();
        $pool->discard($a);
        self::assertTrue($a->closed);
        $b = $pool->borrow();
        self::assertNotSame($a, $b);
        $stats = $pool->stats();
        self::assertSame([1, 1, 2], [$stats['discarded'], $stats['total'], $stats['created']]);

        $this->expectException(\Error::class);
        $pool->release($a);
    }

    public function testReleasingAForeignOrAlreadyReleasedConnectionIsAnError(): void
    {
        $pool = $this->factory->pool();
        try {
            $pool->release(new FakeConnection(99));
            self::fail('a foreign connection was accepted');
        } catch (\Error $e) {
            self::assertStringContainsString('not borrowed from this pool', $e->getMessage());
        }
        $other = $this->factory->pool();
        $c = $other->borrow();
        try {
            $pool->release($c);
            self::fail('a connection from another pool was accepted');
        } catch (\Error) {
        }
        $other->release($c);
        $this->expectException(\Error::class);
        $other->release($c);
    }

    public function testConnectFailureRaisesToTheCallerAndFreesTheSlot(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withMax(1));
        $this->factory->failNext = 1;
        try {
            $pool->borrow();
            self::fail('the connect failure must reach the borrower');
        } catch (\RuntimeException $e) {
            self::assertSame('Connection refused (fake)', $e->getMessage());
        }
        $stats = $pool->stats();
        self::assertSame([0, 0, 0], [$stats['total'], $stats['connecting'], $stats['in_use']]);
        $pool->release($pool->borrow());
        self::assertSame(1, $pool->stats()['total']);
    }

    public function testWarmUpFailureIsNotTheBorrowersProblem(): void
    {
        $factory = $this->factory;
        // The first connect succeeds, the warm-up ones fail.
        $pool = new \Weft\Pool\Pool(
            static function () use ($factory): FakeConnection {
                $c = $factory->connect();
                $factory->failNext = 5;
                return $c;
            },
            static function (FakeConnection $c): void {
                $c->closed = true;
            },
            null,
            PoolOptions::defaults()->withMin(3),
        );
        $c = $pool->borrow();
        self::assertSame(1, $pool->stats()['total']);
        self::assertSame(2, $factory->attempts, 'it tried to warm up, and stopped at the first failure');
        $pool->release($c);
    }

    public function testWaitersAreServedInArrivalOrderAndReleasedConnectionsGoStraightToThem(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withMax(1));
        $order = [];
        run(function () use ($pool, &$order): void {
            $held = $pool->borrow();
            $wg = new WaitGroup();
            foreach (['a', 'b', 'c'] as $name) {
                $wg->add();
                go(function () use ($pool, $name, &$order, $wg): void {
                    $c = $pool->borrow();
                    $order[] = $name;
                    sleep(0.001);
                    $pool->release($c);
                    $wg->done();
                });
            }
            self::assertSame(3, $pool->stats()['waiting']);
            $pool->release($held);
            // Released above straight to "a": a borrow arriving now must queue behind b and c.
            $c = $pool->borrow();
            $order[] = 'late';
            $pool->release($c);
            $wg->wait();
        });
        self::assertSame(['a', 'b', 'c', 'late'], $order);
        self::assertSame(1, $pool->stats()['created']);
        self::assertSame(0, $pool->stats()['waiting']);
    }

    public function testBorrowTimesOutWithPoolExhausted(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withMax(1)->withBorrowTimeout(0.05));
        run(function () use ($pool): void {
            $held = $pool->borrow();
            try {
                $pool->borrow();
                self::fail('the borrow must time out');
            } catch (PoolExhausted $e) {
                self::assertStringContainsString('within 0.05 s', $e->getMessage());
                self::assertStringContainsString('max 1, in use 1, waiting 0', $e->getMessage());
            }
            try {
                $pool->borrow(0.01);
                self::fail('an explicit timeout must be honoured');
            } catch (PoolExhausted $e) {
                self::assertStringContainsString('within 0.01 s', $e->getMessage());
            }
            $stats = $pool->stats();
            self::assertSame([2, 0], [$stats['timeouts'], $stats['waiting']]);
            $pool->release($held);
            $pool->release($pool->borrow());
        });
    }

    public function testAWaiterCancelledFromOutsideLeavesTheQueue(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withMax(1));
        $got = [];
        run(function () use ($pool, &$got): void {
            $held = $pool->borrow();
            $impatient = go(static fn () => \Weft\timeout(0.02, static fn () => $pool->borrow()));
            $patient = go(function () use ($pool, &$got): void {
                $c = $pool->borrow();
                $got[] = $c;
                $pool->release($c);
            });
            try {
                $impatient->join();
                self::fail('the outer timeout must propagate');
            } catch (Timeout) {
            }
            self::assertSame(1, $pool->stats()['waiting']);
            $pool->release($held);
            $patient->join();
            self::assertSame([$held], $got);
        });
        self::assertSame(['in_use' => 0, 'idle' => 1], \array_slice($pool->stats(), 0, 2));
    }

    public function testAConnectionHandedToAWaiterThatWasJustCancelledGoesToTheNextOne(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withMax(1));
        run(function () use ($pool): void {
            $held = $pool->borrow();
            $cancelled = go(static fn () => $pool->borrow());
            $next = go(function () use ($pool): FakeConnection {
                $c = $pool->borrow();
                $pool->release($c);
                return $c;
            });
            // The cancel is queued; the release reaches the cancelled waiter before it runs again.
            $cancelled->cancel();
            $pool->release($held);
            try {
                $cancelled->join();
                self::fail();
            } catch (\Weft\Coroutine\Cancelled) {
            }
            self::assertSame($held, $next->join());
        });
        self::assertSame(['in_use' => 0, 'idle' => 1], \array_slice($pool->stats(), 0, 2));
    }

    public function testADiscardHandsTheSlotToTheFirstWaiter(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withMax(1));
        run(function () use ($pool): void {
            $held = $pool->borrow();
            $waiter = go(function () use ($pool): FakeConnection {
                $c = $pool->borrow();
                $pool->release($c);
                return $c;
            });
            $pool->discard($held);
            $c = $waiter->join();
            self::assertNotSame($held, $c);
            self::assertFalse($c->closed);
        });
        self::assertSame(2, $pool->stats()['created']);
        self::assertSame(1, $pool->stats()['total']);
    }

    public function testAWaiterWhoseConnectFailsGetsTheErrorAndPassesTheSlotOn(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withMax(1));
        run(function () use ($pool): void {
            $held = $pool->borrow();
            $first = go(static fn () => $pool->borrow());
            $second = go(function () use ($pool): bool {
                $pool->release($pool->borrow());
                return true;
            });
            $this->factory->failNext = 1;
            $pool->discard($held);
            try {
                $first->join();
                self::fail('the connect failure must reach the waiter');
            } catch (\RuntimeException $e) {
                self::assertSame('Connection refused (fake)', $e->getMessage());
            }
            self::assertTrue($second->join());
        });
        self::assertSame(1, $pool->stats()['total']);
    }

    public function testUseReleasesOnSuccessAndOnOrdinaryErrors(): void
    {
        $pool = $this->factory->pool();
        self::assertSame(42, $pool->use(static fn (FakeConnection $c) => 42));
        try {
            $pool->use(static fn (FakeConnection $c) => throw new \LogicException('app bug'));
            self::fail();
        } catch (\LogicException) {
        }
        $stats = $pool->stats();
        self::assertSame([0, 1, 0, 1], [$stats['in_use'], $stats['idle'], $stats['discarded'], $stats['created']]);
    }

    public function testUseRetriesOnceOnAFreshConnectionWhenSafe(): void
    {
        $pool = $this->factory->pool();
        // Two idle connections: the retry must not pick the other idle one (it may be broken the same way).
        $a = $pool->borrow();
        $b = $pool->borrow();
        $pool->release($a);
        $pool->release($b);

        $seen = [];
        $result = $pool->use(function (FakeConnection $c) use (&$seen): string {
            $seen[] = $c->number;
            if (\count($seen) === 1) {
                throw new FakeBroken(true);
            }
            return 'ok';
        });
        self::assertSame('ok', $result);
        self::assertSame([2, 3], $seen, 'first on the most recent idle one, then on a new one');
        self::assertTrue($b->closed);
        self::assertSame(1, $pool->stats()['discarded']);
    }

    public function testUseDoesNotRetryWhenUnsafe(): void
    {
        $pool = $this->factory->pool();
        $attempts = 0;
        try {
            $pool->use(static function () use (&$attempts): void {
                $attempts++;
                throw new FakeBroken(false);
            });
            self::fail();
        } catch (FakeBroken) {
        }
        self::assertSame(1, $attempts);
        self::assertSame(1, $pool->stats()['discarded']);
        self::assertSame(0, $pool->stats()['total']);
    }

    public function testUseRetriesANeverSentCommandAtMostFourTimes(): void
    {
        $pool = $this->factory->pool();
        $attempts = 0;
        try {
            $pool->use(static function () use (&$attempts): void {
                $attempts++;
                throw new FakeBroken(true, "broke #$attempts");
            });
            self::fail();
        } catch (FakeBroken $e) {
            self::assertSame('broke #5', $e->getMessage());
        }
        self::assertSame(5, $attempts, 'the first try, and four retries of a command that was never sent');
        self::assertSame(5, $pool->stats()['discarded']);
    }

    public function testRetryAtMaxMakesRoomByClosingAnIdleConnection(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withMax(2));
        $a = $pool->borrow();
        $b = $pool->borrow();
        $pool->release($a);
        $pool->release($b);
        $held = $pool->borrow(); // b
        $seen = [];
        $pool->use(function (FakeConnection $c) use (&$seen): void {
            $seen[] = $c->number;
            if (\count($seen) === 1) {
                throw new FakeBroken(true);
            }
        });
        self::assertSame([1, 3], $seen);
        $pool->release($held);
        self::assertSame(2, $pool->stats()['total']);
    }

    public function testReusableHookClosesConnectionsInsteadOfPoolingThem(): void
    {
        $pool = $this->factory->pool(reusable: static fn (FakeConnection $c): bool => $c->healthy);
        $a = $pool->borrow();
        $a->healthy = false;
        $pool->release($a);
        self::assertTrue($a->closed);
        self::assertSame(['discarded' => 1, 'total' => 0], ['discarded' => $pool->stats()['discarded'], 'total' => $pool->stats()['total']]);
    }

    public function testHundredCoroutinesShareFiveConnections(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withMax(5)->withBorrowTimeout(30.0));
        $this->factory->connectDelay = 0.001;
        $peak = 0;
        $active = 0;
        $done = 0;
        run(function () use ($pool, &$peak, &$active, &$done): void {
            $wg = new WaitGroup();
            for ($i = 0; $i < 100; $i++) {
                $wg->add();
                go(function () use ($pool, $wg, &$peak, &$active, &$done): void {
                    for ($round = 0; $round < 3; $round++) {
                        $pool->use(function (FakeConnection $c) use (&$peak, &$active): void {
                            self::assertFalse($c->busy, 'a connection is never shared by two coroutines');
                            self::assertFalse($c->closed);
                            $c->busy = true;
                            $active++;
                            $peak = \max($peak, $active);
                            sleep(0.001);
                            $active--;
                            $c->busy = false;
                        });
                    }
                    $done++;
                    $wg->done();
                });
            }
            self::assertGreaterThan(90, $pool->stats()['waiting']);
            $wg->wait();
        });
        self::assertSame(100, $done);
        self::assertSame(5, $peak);
        $stats = $pool->stats();
        self::assertSame(5, $stats['created']);
        self::assertSame([0, 5, 0, 5], [$stats['in_use'], $stats['idle'], $stats['waiting'], $stats['total']]);
    }

    public function testStatsReportEveryCounter(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withMax(3)->withMin(1));
        $a = $pool->borrow();
        $b = $pool->borrow();
        $pool->discard($b);
        self::assertSame([
            'in_use' => 1,
            'idle' => 0,
            'waiting' => 0,
            'total' => 1,
            'connecting' => 0,
            'created' => 2,
            'discarded' => 1,
            'evicted' => 0,
            'timeouts' => 0,
            'min' => 1,
            'max' => 3,
            'closed' => false,
        ], $pool->stats());
        $pool->release($a);
        self::assertSame(1, $pool->stats()['idle']);
    }

    public function testCloseClosesIdleAndRefusesBorrowsAndClosesInUseOnRelease(): void
    {
        $pool = $this->factory->pool();
        $a = $pool->borrow();
        $b = $pool->borrow();
        $pool->release($a);
        $pool->close();
        self::assertTrue($a->closed);
        self::assertFalse($b->closed);
        self::assertTrue($pool->isClosed());
        try {
            $pool->borrow();
            self::fail();
        } catch (PoolClosed) {
        }
        $pool->release($b);
        self::assertTrue($b->closed);
        self::assertSame(0, $pool->stats()['total']);
        $pool->close();
    }

    public function testCloseWakesWaiters(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withMax(1));
        run(function () use ($pool): void {
            $held = $pool->borrow();
            $waiter = go(static fn () => $pool->borrow());
            $pool->close();
            try {
                $waiter->join();
                self::fail();
            } catch (PoolClosed $e) {
                self::assertStringContainsString('closed while waiting', $e->getMessage());
            }
            $pool->release($held);
            self::assertTrue($held->closed);
        });
    }

    public function testPoolTimersNeverKeepTheLoopAlive(): void
    {
        $pool = $this->factory->pool(PoolOptions::defaults()->withIdleTimeout(0.01));
        $start = \hrtime(true);
        run(static function () use ($pool): void {
            $pool->release($pool->borrow());
        });
        self::assertLessThan(1.0, (\hrtime(true) - $start) / 1e9);
        self::assertSame(0, \Weft\Loop\Loop::get()->watcherCount()['referenced']);
    }
}
