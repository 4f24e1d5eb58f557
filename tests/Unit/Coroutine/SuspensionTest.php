<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Coroutine;

use Weft\Coroutine\Coroutine;
use Weft\Coroutine\Scheduler;
use Weft\Coroutine\SuspensionError;

use function Weft\go;
use function Weft\run;

/**
 * The one way to suspend the running coroutine and wake it: Scheduler::await(), resume(), throw(). Its
 * state (waiting, its Fiber, a pending cancel) is the Coroutine's own; misuse fails loudly.
 */
final class SuspensionTest extends CoroutineTestCase
{
    public function testTheStateIsNotWritableFromOutside(): void
    {
        foreach (['waiting', 'fiber', 'pendingCancel', 'onCancel'] as $name) {
            $property = new \ReflectionProperty(Coroutine::class, $name);
            self::assertTrue($property->isPrivate(), "Coroutine::\$$name is private");
        }
    }

    public function testResumingTwiceFailsLoudly(): void
    {
        $error = run(static function (): ?\Throwable {
            $scheduler = Scheduler::get();
            $waiter = go(static fn () => $scheduler->await());
            self::assertTrue($waiter->isWaiting());
            $scheduler->resume($waiter, 'first');
            self::assertFalse($waiter->isWaiting());
            try {
                $scheduler->resume($waiter, 'second');
            } catch (SuspensionError $e) {
                self::assertSame('first', $waiter->join());
                return $e;
            }
            return null;
        });
        self::assertInstanceOf(SuspensionError::class, $error);
        self::assertMatchesRegularExpression('/Coroutine #\d+ is not waiting; it cannot be resumed/', $error->getMessage());
    }

    public function testThrowingIntoOneThatIsNotSuspendedFailsLoudly(): void
    {
        $this->expectException(SuspensionError::class);
        $this->expectExceptionMessageMatches('/Coroutine #\d+ is not waiting; it cannot be resumed/');
        run(static function (): void {
            $running = go(static fn () => 1);
            Scheduler::get()->throw($running, new \RuntimeException('never delivered'));
        });
    }

    public function testSuspendingFromALoopCallbackFailsLoudly(): void
    {
        $scheduler = Scheduler::get();
        $error = null;
        $scheduler->driver->defer(static function () use ($scheduler, &$error): void {
            try {
                $scheduler->await();
            } catch (SuspensionError $e) {
                $error = $e;
            }
        });
        $scheduler->driver->run();
        self::assertInstanceOf(SuspensionError::class, $error);
        self::assertStringContainsString('Cannot wait inside an event loop callback', $error->getMessage());
    }

    public function testWakingACancelledWaitAgainFailsLoudly(): void
    {
        // A cancel is that wait's one wake-up: a watcher that fires afterwards and does not ask
        // isWaiting() first must hear so at once, not wake whatever the coroutine waits for next.
        $error = run(static function (): ?\Throwable {
            $scheduler = Scheduler::get();
            $waiter = go(static function () use ($scheduler): void {
                try {
                    $scheduler->await();
                } catch (\RuntimeException) {
                }
            });
            $waiter->cancel(new \RuntimeException('cancelled'));
            try {
                $scheduler->resume($waiter, 'late');
            } catch (SuspensionError $e) {
                $waiter->join();
                return $e;
            }
            return null;
        });
        self::assertInstanceOf(SuspensionError::class, $error);
        self::assertMatchesRegularExpression('/Coroutine #\d+ is not waiting; it cannot be resumed/', $error->getMessage());
    }

    public function testRunningIsTheCoroutineOnlyInsideItsOwnFiber(): void
    {
        $scheduler = Scheduler::get();
        self::assertNull($scheduler->running());
        $seen = run(static function () use ($scheduler): array {
            $inside = null;
            $foreign = 'unset';
            $coroutine = go(static function () use ($scheduler, &$inside, &$foreign): void {
                $inside = $scheduler->running();
                // Someone else's Fiber inside the coroutine: the scheduler must not suspend it.
                $fiber = new \Fiber(static function () use ($scheduler, &$foreign): void {
                    $foreign = $scheduler->running();
                });
                $fiber->start();
            });
            return [$coroutine, $inside, $foreign];
        });
        self::assertSame($seen[0], $seen[1]);
        self::assertNull($seen[2]);
    }
}
