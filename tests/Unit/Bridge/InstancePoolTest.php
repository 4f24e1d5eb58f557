<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Bridge;

use PHPUnit\Framework\TestCase;
use Weft\Bridge\InstancePool;
use Weft\Coroutine\Scheduler;
use Weft\Coroutine\StateSet;
use Weft\Hook\Hooks;
use Weft\Server\Stats;

final class InstancePoolTest extends TestCase
{
    protected function setUp(): void
    {
        // What earlier tests left does not count towards the thresholds below, and a pool of an earlier
        // test that booted a second instance took PHP's collector over.
        \gc_enable();
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
        self::assertTrue(\gc_enabled(), 'one instance booted: PHP\'s own collector as it was');
        // Four requests at once (outside a coroutine nothing else is queued: each is let in) boot four instances.
        $held = [$pool->acquire(), $pool->acquire(), $pool->acquire(), $pool->acquire()];
        foreach ($held as $instance) {
            $pool->release($instance);
        }
        self::assertSame(4, $pool->booted());
        self::assertFalse(\gc_enabled(), 'PHP\'s own collector (every 10,000 roots) is off');

        // 30,000 garbage cycles: past PHP's threshold, under the pool's (4 instances x 10,000).
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
        $pool->release($pool->acquire());
        self::assertTrue(\gc_enabled());
    }

    public function testAPoolThatBootedOneInstanceLeavesTheCollectorAlone(): void
    {
        // A route that never waits is served by one instance, whatever the pool's size: nothing changes.
        $pool = new InstancePool(static fn (): \stdClass => new \stdClass(), 50, StateSet::capture());
        $pool->warm();
        for ($i = 0; $i < 3; $i++) {
            $pool->release($pool->acquire());
        }
        self::assertSame(1, $pool->booted());
        self::assertTrue(\gc_enabled());
    }

    public function testRequestsThatWaitOnIOAreAllLetIn(): void
    {
        // While every request in the framework waits (here on a timer, as on a database), the worker is
        // idle: the next request is let in, up to the pool's size.
        $pool = new InstancePool(static fn (): \stdClass => new \stdClass(), 3, StateSet::capture());
        $pool->warm();
        $most = 0;
        self::atOnce(5, static function () use ($pool, &$most): void {
            $instance = $pool->acquire();
            $most = \max($most, $pool->load()['inFlight']);
            \Weft\sleep(0.02);
            $pool->release($instance);
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

    public function testTheFirstInstanceBootsAtTheStartAndTheOthersWhenTheLoadNeedsThem(): void
    {
        $boots = 0;
        $pool = new InstancePool(static function () use (&$boots): \stdClass {
            $boots++;
            return new \stdClass();
        }, 4, StateSet::capture());
        $pool->warm();
        self::assertSame([1, 1], [$boots, $pool->booted()], 'one instance at the worker\'s start');
        self::assertSame(1, Stats::collect(0, 0, 0.0, 'coroutine', 'select')['app_instances'], 'reported with the worker\'s figures');

        // Requests that never wait take turns on the one instance: no second boots.
        self::atOnce(5, static fn () => $pool->release($pool->acquire()));
        self::assertSame(1, $pool->booted());

        // Two requests that wait at once: the second is let in while the first waits, and boots a second instance.
        self::atOnce(2, static function () use ($pool): void {
            $instance = $pool->acquire();
            \Weft\sleep(0.01);
            $pool->release($instance);
        });
        self::assertSame([2, 2], [$boots, $pool->booted()]);
        self::assertSame(2, Stats::collect(0, 0, 0.0, 'coroutine', 'select')['app_instances']);
    }

    public function testABootInARequestRunsWhereTheHooksBlock(): void
    {
        // The second instance boots inside a request: in a Fiber of its own, where Scheduler::running() is
        // null, so a hooked wait in the boot blocks (as at the worker's start) and no other request runs in
        // the middle of it, with its statics half written.
        $seen = [];
        $log = [];
        $pool = new InstancePool(static function () use (&$seen, &$log): \stdClass {
            $seen[] = Scheduler::get()->running();
            $log[] = 'boot begins';
            if (Hooks::isSupported()) {
                \usleep(30_000);
            }
            $log[] = 'boot ends';
            return new \stdClass();
        }, 2, StateSet::capture());
        if (Hooks::isSupported()) {
            Hooks::enable(Hooks::KINDS['sleep']);
        }
        try {
            $pool->warm();
            self::atOnce(3, static function (int $i) use ($pool, &$log): void {
                if ($i === 0) {
                    for ($tick = 0; $tick < 4; $tick++) {
                        \Weft\sleep(0.005);
                        $log[] = 'tick';
                    }
                    return;
                }
                $instance = $pool->acquire();
                \Weft\sleep(0.001);
                $pool->release($instance);
            });
        } finally {
            Hooks::disable();
        }
        self::assertSame([null, null], $seen, 'neither boot ran as a coroutine');
        $begins = \array_keys($log, 'boot begins', true)[1];
        self::assertSame('boot ends', $log[$begins + 1], 'nothing ran in the middle of the second boot: ' . \implode(', ', $log));
        self::assertSame(4, \count(\array_keys($log, 'tick', true)));
    }

    public function testABootThatFailsInARequestFailsThatRequestAndThePoolGoesOn(): void
    {
        $boots = 0;
        $pool = new InstancePool(static function () use (&$boots): \stdClass {
            if (++$boots === 2) {
                throw new \RuntimeException('the database is down');
            }
            return new \stdClass();
        }, 2, StateSet::capture());
        $pool->warm();
        $outcomes = [];
        self::atOnce(3, static function () use ($pool, &$outcomes): void {
            try {
                $instance = $pool->acquire();
            } catch (\RuntimeException $e) {
                $outcomes[] = $e->getMessage();
                return;
            }
            \Weft\sleep(0.01);
            $pool->release($instance);
            $outcomes[] = 'served';
        });
        \sort($outcomes);
        // The second request's boot failed; the third booted the second instance or waited for the first.
        self::assertSame(['served', 'served', 'the database is down'], $outcomes);
        self::assertSame(['inFlight' => 0, 'waiting' => 0], $pool->load());
        self::assertContains($pool->booted(), [1, 2]);
    }

    public function testABootThatSuspendsItsFiberIsAnError(): void
    {
        $pool = new InstancePool(static function (): \stdClass {
            static $boots = 0;
            if (++$boots === 2) {
                \Fiber::suspend();
            }
            return new \stdClass();
        }, 2, StateSet::capture());
        $pool->warm();
        $outcome = null;
        \Weft\run(static function () use ($pool, &$outcome): void {
            $first = \Weft\go(static function () use ($pool): void {
                $instance = $pool->acquire();
                \Weft\sleep(0.01);
                $pool->release($instance);
            });
            $second = \Weft\go(static function () use ($pool, &$outcome): void {
                try {
                    $pool->release($pool->acquire());
                    $outcome = 'served';
                } catch (\LogicException $e) {
                    $outcome = $e->getMessage();
                }
            });
            $first->join();
            $second->join();
        });
        self::assertSame('The application suspended a Fiber while it booted: a framework instance must boot without waiting on a Fiber or a coroutine', $outcome);
    }

    /**
     * Runs $count requests at once, each in its own coroutine (given its index), until all are done.
     *
     * @param \Closure(int): void $request
     */
    private static function atOnce(int $count, \Closure $request): void
    {
        \Weft\run(static function () use ($count, $request): void {
            $coroutines = [];
            for ($i = 0; $i < $count; $i++) {
                $coroutines[] = \Weft\go($request, $i);
            }
            foreach ($coroutines as $coroutine) {
                $coroutine->join();
            }
        });
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
