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
}
