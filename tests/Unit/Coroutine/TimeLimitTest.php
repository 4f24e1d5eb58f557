<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Coroutine;

use Weft\Coroutine\Cancelled;
use Weft\Coroutine\Scheduler;
use Weft\Coroutine\SuspensionError;
use Weft\Coroutine\TimeLimit;

use function Weft\go;
use function Weft\run;

/**
 * The one way a wait gets a time limit: the limit resumes the wait with its "timed out" value, only that
 * wait, never a later one, and never cancels. Lazily for an owner waited on again and again: one timer
 * for many waits.
 */
final class TimeLimitTest extends CoroutineTestCase
{
    public function testTheLimitEndsTheWaitWithItsValue(): void
    {
        $scheduler = Scheduler::get();
        self::assertSame('timed out', run(static fn () => TimeLimit::once($scheduler, 0.01, 'timed out')));
        self::assertSame(0, TimeLimit::once($scheduler, 0.01, 0), '{main} waits the same way');
        self::assertSame(0, $scheduler->driver->watcherCount()['enabled'], 'no timer is left');
    }

    public function testAWakeUpFirstEndsTheWaitAndTheTimerGoes(): void
    {
        $scheduler = Scheduler::get();
        $value = run(static function () use ($scheduler): string {
            $waiter = go(static fn () => TimeLimit::once($scheduler, 30.0, 'timed out'));
            $scheduler->resume($waiter, 'woken');
            return $waiter->join();
        });
        self::assertSame('woken', $value);
        self::assertSame(0, $scheduler->driver->watcherCount()['enabled']);
    }

    public function testACancelledWaitThrowsAndItsLimitNeverReachesALaterWait(): void
    {
        $scheduler = Scheduler::get();
        $limit = new TimeLimit($scheduler, 'timed out');
        $seen = run(static function () use ($scheduler, $limit): array {
            $waiter = go(static function () use ($limit, $scheduler): array {
                try {
                    $limit->await(0.05);
                } catch (Cancelled $e) {
                    $first = $e->getMessage();
                }
                // The first wait's timer is still set (lazy); it fires during this wait, which must not
                // take it for its own: this wait has no limit and is woken by hand.
                return [$first ?? null, $scheduler->await()];
            });
            $waiter->cancel(new Cancelled('stop'));
            \Weft\sleep(0.1);
            self::assertTrue($waiter->isWaiting(), 'the old limit fired and left the later wait alone');
            $scheduler->resume($waiter, 'by hand');
            return $waiter->join();
        });
        self::assertSame(['stop', 'by hand'], $seen);
    }

    public function testAnOwnerKeepsOneTimerForManyWaits(): void
    {
        $scheduler = Scheduler::get();
        $driver = $scheduler->driver;
        $limit = new TimeLimit($scheduler, 'timed out');
        $timers = run(static function () use ($scheduler, $driver, $limit): array {
            $waiter = go(static function () use ($limit): array {
                $values = [];
                for ($i = 0; $i < 5; $i++) {
                    $values[] = $limit->await(30.0);
                }
                return $values;
            });
            $counts = [];
            for ($i = 0; $i < 5; $i++) {
                $counts[] = $driver->watcherCount()['enabled'];
                $scheduler->resume($waiter, $i);
                \Weft\sleep(0);
            }
            self::assertSame([0, 1, 2, 3, 4], $waiter->join());
            return $counts;
        });
        self::assertSame([1, 1, 1, 1, 1], $timers, 'one timer, set at the first wait, for all five');
        self::assertSame(0, $driver->watcherCount()['referenced'], 'and it does not hold the loop');
        $limit->drop();
        self::assertSame(0, $driver->watcherCount()['enabled']);
    }

    public function testALaterLongerWaitRunsToItsOwnDeadlineAndAShorterOneIsNotDelayed(): void
    {
        $scheduler = Scheduler::get();
        $limit = new TimeLimit($scheduler, 'timed out');
        $stage = 0;
        // An owner's limit does not hold the loop (its watcher does, during a wait): this one stands in.
        $owner = $scheduler->driver->repeat(1.0, static fn () => null);
        $seen = run(static function () use ($scheduler, $limit, &$stage, $owner): array {
            $waiter = go(static function () use ($limit, &$stage): array {
                $values = [$limit->await(0.05)];
                // The timer set for the first wait fires early for this one: it is set again for the rest.
                $start = \hrtime(true);
                $values[] = $limit->await(0.3);
                $values[] = (\hrtime(true) - $start) / 1e9;
                $stage = 1;
                // Now its timer fires in a minute: a shorter wait must replace it, not wait for it.
                $values[] = $limit->await(60.0);
                $start = \hrtime(true);
                $values[] = $limit->await(0.05);
                $values[] = (\hrtime(true) - $start) / 1e9;
                return $values;
            });
            $scheduler->resume($waiter, 'woken');
            while ($stage === 0) {
                \Weft\sleep(0.01);
            }
            $scheduler->resume($waiter, 'woken again');
            $values = $waiter->join();
            $scheduler->driver->cancel($owner);
            return $values;
        });
        [$first, $long, $longTook, $third, $short, $shortTook] = $seen;
        self::assertSame(['woken', 'timed out', 'woken again', 'timed out'], [$first, $long, $third, $short]);
        self::assertGreaterThanOrEqual(0.29, $longTook, 'not cut short by the first wait\'s timer');
        self::assertLessThan(30.0, $shortTook, 'the one-minute timer was replaced');
    }

    public function testAnOwnersLimitServesOneWaitAtATime(): void
    {
        $scheduler = Scheduler::get();
        $limit = new TimeLimit($scheduler, 'timed out');
        $error = run(static function () use ($scheduler, $limit): ?\Throwable {
            $first = go(static fn () => $limit->await(30.0));
            $second = go(static function () use ($limit): ?\Throwable {
                try {
                    $limit->await(30.0);
                } catch (SuspensionError $e) {
                    return $e;
                }
                return null;
            });
            $scheduler->resume($first, null);
            $first->join();
            $limit->drop();
            return $second->join();
        });
        self::assertInstanceOf(SuspensionError::class, $error);
        self::assertMatchesRegularExpression('/already in use by a wait of coroutine #\d+/', $error->getMessage());
    }
}
