<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Bridge;

use PHPUnit\Framework\TestCase;
use Weft\Bridge\InstancePool;
use Weft\Coroutine\Scheduler;
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

    public function testARequestThatGaveItsInstanceBackIsNoLongerBoundToItsState(): void
    {
        // Bound while it holds the instance; unbound once it gave it back, as the bridges end a request
        // (inside Instance::run(), whose end restores the binding it found): the connection's next read or
        // an admission wait then resumes it without switching into the state of an instance it no longer holds.
        $pool = new InstancePool(static fn (): \stdClass => new \stdClass(), 2, StateSet::capture());
        $pool->warm();
        $seen = [];
        \Weft\run(static function () use ($pool, &$seen): void {
            \Weft\go(static function () use ($pool, &$seen): void {
                $instance = $pool->acquire();
                $seen[] = Scheduler::get()->self()->state === $instance->state;
                $instance->run(static function () use ($pool, $instance, &$seen): void {
                    $seen[] = Scheduler::get()->self()->state === $instance->state;
                    $pool->release($instance);
                });
                $seen[] = Scheduler::get()->self()->state;
                \Weft\sleep(0.001);
                $seen[] = Scheduler::get()->self()->state;
                // Taken again, it is bound again; the end of a run() that did not release keeps it bound.
                $again = $pool->acquire();
                $again->run(static fn (): null => null);
                $seen[] = Scheduler::get()->self()->state === $again->state;
                $pool->release($again);
                $seen[] = Scheduler::get()->self()->state;
            })->join();
        });
        self::assertSame([true, true, null, null, true, null], $seen);
    }

    public function testAPoolOfOneLeavesTheCollectorAlone(): void
    {
        $pool = new InstancePool(static fn (): \stdClass => new \stdClass(), 1, StateSet::capture());
        $pool->warm();
        self::assertTrue(\gc_enabled());
    }

    public function testRequestsThatWaitOnIOAreAllLetIn(): void
    {
        // While every request in the framework waits (here on a timer, as on a database), the worker is
        // idle: the next request is let in, up to the pool's size.
        $pool = new InstancePool(static fn (): \stdClass => new \stdClass(), 3, StateSet::capture());
        $pool->warm();
        $most = 0;
        \Weft\run(static function () use ($pool, &$most): void {
            $requests = [];
            for ($i = 0; $i < 5; $i++) {
                $requests[] = \Weft\go(static function () use ($pool, &$most): void {
                    $instance = $pool->acquire();
                    $most = \max($most, $pool->load()['inFlight']);
                    \Weft\sleep(0.02);
                    $pool->release($instance);
                });
            }
            foreach ($requests as $request) {
                $request->join();
            }
        });
        self::assertSame(3, $most, 'three requests in the framework at once: the pool\'s size');
        self::assertSame(['inFlight' => 0, 'waiting' => 0], $pool->load());
    }

    public function testARequestIsNotLetInWhileOtherWorkIsQueued(): void
    {
        // The request in the framework is woken by a deferred callback (work queued for the worker): the
        // next request waits until the first leaves, so one instance serves both.
        $pool = new InstancePool(static fn (): \stdClass => new \stdClass(), 3, StateSet::capture());
        $pool->warm();
        $log = [];
        \Weft\run(static function () use ($pool, &$log): void {
            $scheduler = Scheduler::get();
            $first = \Weft\go(static function () use ($pool, $scheduler, &$log): void {
                $instance = $pool->acquire();
                $log[] = "first in, {$pool->load()['inFlight']} in flight";
                $self = $scheduler->self();
                $scheduler->driver->defer(static fn () => $scheduler->resume($self));
                $scheduler->await();
                $log[] = "first out, {$pool->load()['waiting']} waiting";
                $pool->release($instance);
            });
            $second = \Weft\go(static function () use ($pool, &$log): void {
                $instance = $pool->acquire();
                $log[] = "second in, {$pool->load()['inFlight']} in flight";
                $pool->release($instance);
            });
            $first->join();
            $second->join();
        });
        self::assertSame(['first in, 1 in flight', 'first out, 1 waiting', 'second in, 1 in flight'], $log);
    }

    public function testAWaitingRequestThatIsCancelledLeavesTheQueue(): void
    {
        $pool = new InstancePool(static fn (): \stdClass => new \stdClass(), 2, StateSet::capture());
        $pool->warm();
        $outcome = null;
        \Weft\run(static function () use ($pool, &$outcome): void {
            $scheduler = Scheduler::get();
            $holder = \Weft\go(static function () use ($pool, $scheduler): void {
                $instance = $pool->acquire();
                $self = $scheduler->self();
                $scheduler->driver->defer(static fn () => $scheduler->driver->defer(static fn () => $scheduler->resume($self)));
                $scheduler->await();
                $pool->release($instance);
            });
            $waiter = \Weft\go(static function () use ($pool, &$outcome): void {
                try {
                    $pool->release($pool->acquire());
                    $outcome = 'let in';
                } catch (\Weft\Coroutine\Cancelled) {
                    $outcome = 'cancelled';
                }
            });
            self::assertSame(1, $pool->load()['waiting']);
            $waiter->cancel();
            $waiter->join();
            $holder->join();
        });
        self::assertSame('cancelled', $outcome);
        self::assertSame(['inFlight' => 0, 'waiting' => 0], $pool->load());
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
