<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Loop;

use PHPUnit\Framework\TestCase;
use Weft\Loop\Internal\TimerQueue;
use Weft\Loop\Internal\Watcher;

final class TimerQueueTest extends TestCase
{
    /** Random inserts, removals and extractions against what a sorted list would give. */
    public function testAgreesWithASortedListUnderRandomOperations(): void
    {
        \mt_srand(42);
        $queue = new TimerQueue();
        /** @var array<string, Watcher> $live */
        $live = [];
        for ($i = 0; $i < 20_000; $i++) {
            $op = \mt_rand(0, 9);
            if ($op < 5 || $live === []) {
                $watcher = new Watcher("t$i", Watcher::DELAY, static fn () => null);
                $watcher->expiration = \mt_rand(0, 50) / 10;
                $queue->insert($watcher);
                $live[$watcher->id] = $watcher;
            } elseif ($op < 7) {
                $key = \array_rand($live);
                $queue->remove($live[$key]);
                unset($live[$key]);
            } else {
                $now = \mt_rand(0, 50) / 10;
                $previous = [-1.0, -1];
                while (($watcher = $queue->extract($now)) !== null) {
                    self::assertLessThanOrEqual($now, $watcher->expiration);
                    $key = [$watcher->expiration, $watcher->order];
                    self::assertGreaterThan($previous, $key, 'extracted in expiry, then insertion order');
                    $previous = $key;
                    unset($live[$watcher->id]);
                }
                foreach ($live as $watcher) {
                    self::assertGreaterThan($now, $watcher->expiration, 'an expired timer was left behind');
                }
            }
            self::assertSame(\count($live), $queue->count());
        }
    }

    public function testReinsertingMovesATimer(): void
    {
        $queue = new TimerQueue();
        $a = new Watcher('a', Watcher::DELAY, static fn () => null);
        $b = new Watcher('b', Watcher::DELAY, static fn () => null);
        $a->expiration = 1.0;
        $b->expiration = 2.0;
        $queue->insert($a);
        $queue->insert($b);
        $a->expiration = 3.0;
        $queue->insert($a);
        self::assertSame(2, $queue->count());
        self::assertSame($b, $queue->extract(10));
        self::assertSame($a, $queue->extract(10));
        self::assertNull($queue->extract(10));
        self::assertNull($queue->peek());
    }

    public function testATimerFiresInTheFirstMillisecondAtOrAfterItsExpiryNeverBefore(): void
    {
        $queue = new TimerQueue();
        $a = new Watcher('a', Watcher::DELAY, static fn () => null);
        $a->expiration = 5.0004;
        $queue->insert($a);
        self::assertSame(5.001, $queue->peek());
        self::assertNull($queue->extract(5.0004), 'not before the millisecond it falls due in');
        self::assertNull($queue->extract(5.0009));
        self::assertSame($a, $queue->extract(5.001));
        self::assertSame(0, $queue->count());
    }

    public function testTimersOfOneMillisecondFireInTheOrderSetAndACancelledOneIsSkipped(): void
    {
        $queue = new TimerQueue();
        $timers = [];
        foreach (['a' => 2.0003, 'b' => 2.0001, 'c' => 2.0002, 'd' => 2.0005] as $id => $expiration) {
            $timers[$id] = new Watcher($id, Watcher::DELAY, static fn () => null);
            $timers[$id]->expiration = $expiration;
            $queue->insert($timers[$id]);
        }
        self::assertSame($timers['a'], $queue->extract(3.0));
        // Cancelled while its bucket is being handed out (a callback of the one before cancels it).
        $queue->remove($timers['b']);
        self::assertSame(2, $queue->count());
        // Set again while the bucket fires: it goes to the back, in its new millisecond.
        $queue->insert($timers['c']);
        self::assertSame($timers['d'], $queue->extract(3.0));
        self::assertSame($timers['c'], $queue->extract(3.0));
        self::assertNull($queue->extract(3.0));
        self::assertSame(0, $queue->count());
        self::assertNull($queue->peek());
    }
}
