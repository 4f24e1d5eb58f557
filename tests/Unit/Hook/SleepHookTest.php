<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Hook;

use PHPUnit\Framework\TestCase;
use Weft\Coroutine\Cancelled;
use Weft\Hook\Hooks;
use Weft\Loop\Loop;

use function Weft\go;
use function Weft\run;

/** sleep(), usleep() and time_nanosleep() suspend inside a coroutine and are the originals elsewhere. */
final class SleepHookTest extends TestCase
{
    protected function setUp(): void
    {
        if (!Hooks::isSupported()) {
            self::markTestSkipped('the weft extension is not loaded (bash scripts/build-ext.sh)');
        }
        Loop::reset('select');
        self::assertSame(Hooks::KINDS['sleep'], Hooks::enable(Hooks::KINDS['sleep']));
    }

    protected function tearDown(): void
    {
        Hooks::disable();
        Loop::reset('select');
    }

    public function testSleepsInTwoCoroutinesOverlap(): void
    {
        self::assertSame(['short', 'nano', 'long', 'second'], self::race());
    }

    public function testWithTheSleepHookOffTheyBlockInTurn(): void
    {
        Hooks::disable();
        self::assertSame(['second', 'long', 'short', 'nano'], self::race());
    }

    public function testOutsideACoroutineTheOriginalsRun(): void
    {
        self::assertNull(\usleep(1000));
        self::assertSame(0, \sleep(0));
        self::assertTrue(\time_nanosleep(0, 1000));
    }

    public function testInvalidArgumentsFailAsTheOriginalsDo(): void
    {
        $errors = run(static function (): array {
            $errors = [];
            foreach ([static fn () => \usleep(-1), static fn () => \sleep(-1), static fn () => \time_nanosleep(0, -1)] as $call) {
                try {
                    $call();
                    $errors[] = 'none';
                } catch (\ValueError $e) {
                    $errors[] = $e->getMessage();
                }
            }
            return $errors;
        });
        self::assertSame([
            'usleep(): Argument #1 ($microseconds) must be greater than or equal to 0',
            'sleep(): Argument #1 ($seconds) must be greater than or equal to 0',
            'time_nanosleep(): Argument #2 ($nanoseconds) must be greater than or equal to 0',
        ], $errors);
    }

    public function testCancellingASleepingCoroutineThrowsIntoIt(): void
    {
        $outcome = run(static function (): string {
            $sleeper = go(static function (): string {
                \sleep(30);
                return 'slept';
            });
            $sleeper->cancel();
            try {
                return $sleeper->join();
            } catch (Cancelled) {
                return 'cancelled';
            }
        });
        self::assertSame('cancelled', $outcome);
    }

    /** @return list<string> the order in which four sleepers finished */
    private static function race(): array
    {
        return run(static function (): array {
            $log = [];
            $coroutines = [
                go(static function () use (&$log): void {
                    \sleep(1);
                    $log[] = 'second';
                }),
                go(static function () use (&$log): void {
                    \usleep(300_000);
                    $log[] = 'long';
                }),
                go(static function () use (&$log): void {
                    \usleep(20_000);
                    $log[] = 'short';
                }),
                go(static function () use (&$log): void {
                    self::assertTrue(\time_nanosleep(0, 100_000_000));
                    $log[] = 'nano';
                }),
            ];
            foreach ($coroutines as $coroutine) {
                $coroutine->join();
            }
            return $log;
        });
    }
}
