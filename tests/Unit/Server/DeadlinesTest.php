<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Server;

use PHPUnit\Framework\TestCase;
use Weft\Loop\Loop;
use Weft\Server\Internal\Deadlines;
use Weft\Server\Internal\Expiring;

use function Weft\run;
use function Weft\sleep;

final class DeadlinesTest extends TestCase
{
    protected function setUp(): void
    {
        Loop::reset('select');
    }

    public function testDeadlinesFireOnceInOrderAndCanBeMovedOrDisarmed(): void
    {
        $fired = [];
        run(static function () use (&$fired): void {
            $deadlines = new Deadlines(Loop::get());
            $deadlines->arm(1, 0.25, static function () use (&$fired): void {
                $fired[] = 'one';
            });
            $deadlines->arm(2, 0.05, static function () use (&$fired): void {
                $fired[] = 'two';
            });
            $deadlines->arm(3, 0.05, static function () use (&$fired): void {
                $fired[] = 'three';
            });
            $deadlines->disarm(3);
            // Moved later: it fires at its new time, not its old one.
            $deadlines->arm(4, 0.05, static function () use (&$fired): void {
                $fired[] = 'four, too early';
            });
            $deadlines->arm(4, 0.4, static function () use (&$fired): void {
                $fired[] = 'four';
            });
            self::assertSame(3, $deadlines->count());
            sleep(0.6);
            self::assertSame(0, $deadlines->count());
        });
        self::assertSame(['two', 'one', 'four'], $fired);
    }

    public function testAnExpiringObjectIsCalledAndTheLatestCallbackOfASlotWins(): void
    {
        $fired = [];
        run(static function () use (&$fired): void {
            $deadlines = new Deadlines(Loop::get());
            $object = new class ($fired) implements Expiring {
                /** @param list<string> $fired */
                public function __construct(private array &$fired)
                {
                }

                public function expired(): void
                {
                    $this->fired[] = 'object';
                }
            };
            $deadlines->arm(1, 0.05, static function () use (&$fired): void {
                $fired[] = 'replaced';
            });
            $deadlines->arm(1, 0.05, $object); // the same slot, another callback: this one runs
            // A key disarmed by an earlier one of the same slot does not fire.
            $deadlines->arm(2, 0.05, static function () use ($deadlines, &$fired): void {
                $fired[] = 'two';
                $deadlines->disarm(3);
            });
            $deadlines->arm(3, 0.05, static function () use (&$fired): void {
                $fired[] = 'three';
            });
            sleep(0.3);
            self::assertSame(0, $deadlines->count());
        });
        self::assertSame(['object', 'two'], $fired);
    }

        public function testADeadlineArmedByAnExpiringOneStillFires(): void
    {
        $fired = 0;
        run(static function () use (&$fired): void {
            $deadlines = new Deadlines(Loop::get());
            $again = null;
            $again = static function () use (&$fired, &$again, $deadlines): void {
                if (++$fired < 3) {
                    $deadlines->arm(7, 0.0, $again);
                }
            };
            $deadlines->arm(7, 0.0, $again);
            sleep(0.5);
        });
        self::assertSame(3, $fired);
    }

    public function testItsTimerDoesNotKeepTheLoopAlive(): void
    {
        $deadlines = new Deadlines(Loop::get());
        $deadlines->arm(1, 60.0, static fn () => null);
        $started = \hrtime(true);
        Loop::run();
        self::assertLessThan(5.0, (\hrtime(true) - $started) / 1e9);
        self::assertTrue($deadlines->isArmed(1));
    }
}
