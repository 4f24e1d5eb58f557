<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Server;

use PHPUnit\Framework\TestCase;
use Weft\Ext\Deadline;
use Weft\Server\CodeDeadline;
use Weft\Server\RequestTimeout;

/**
 * Weft\Ext\Deadline (ext/weft_deadline.c): a Fiber's code is interrupted where it runs once its
 * deadline has passed, and only that Fiber's, never {main}, never exempt code.
 */
final class CodeDeadlineTest extends TestCase
{
    /** @var \Closure(float): int */
    private \Closure $spin;

    protected function setUp(): void
    {
        if (!\class_exists(Deadline::class, false)) {
            self::markTestSkipped('the weft extension is not loaded (bash scripts/build-ext.sh)');
        }
        $this->spin = require __DIR__ . '/fixtures/spin.php';
        // This file's own code is exempt; the spin fixture's is not.
        Deadline::configure(DeadlinePassed::class, 'ran past its deadline', __FILE__, 0.01);
    }

    public function testALoopInAFiberIsInterruptedAtItsDeadlineAndItsFinallyRuns(): void
    {
        $spin = $this->spin;
        $thrown = Deadline::thrown();
        $fiber = new \Fiber(static function () use ($spin): array {
            // Timed from before the arming, on the monotonic clock: taken after it, the few microseconds
            // between the two made a deadline that fired on time look early (0.0499 s).
            $started = \hrtime(true);
            self::assertTrue(Deadline::arm(0.05));
            $finally = false;
            try {
                try {
                    $spin(30.0);
                } finally {
                    $finally = true;
                }
            } catch (DeadlinePassed $e) {
                Deadline::clear();
                return [$e->getMessage(), $finally, (\hrtime(true) - $started) / 1e9];
            }
            return ['not interrupted', $finally, 0.0];
        });
        $fiber->start();
        [$message, $finally, $took] = $fiber->getReturn();
        self::assertSame('ran past its deadline', $message);
        self::assertTrue($finally);
        self::assertGreaterThanOrEqual(0.05, $took);
        self::assertSame($thrown + 1, Deadline::thrown());
        self::assertSame(0, Deadline::count());
    }

    public function testNothingIsArmedOrThrownOutsideAFiber(): void
    {
        self::assertFalse(Deadline::arm(0.01));
        self::assertSame(0, Deadline::count());
        Deadline::clear(); // nothing to clear: no error
        self::assertGreaterThan(0, ($this->spin)(0.1), '{main} runs on');
    }

    public function testOnlyTheFiberWhoseDeadlinePassedIsInterrupted(): void
    {
        $spin = $this->spin;
        $late = new \Fiber(static function () use ($spin): string {
            Deadline::arm(0.02);
            \Fiber::suspend();
            try {
                $spin(30.0);
            } catch (DeadlinePassed) {
                Deadline::clear();
                return 'interrupted';
            }
            return 'ran';
        });
        $late->start();
        // Its deadline passes while it is suspended and another Fiber runs: that one goes on.
        $other = new \Fiber(static fn (): int => $spin(0.15));
        $other->start();
        self::assertGreaterThan(0, $other->getReturn());
        $late->resume();
        self::assertSame('interrupted', $late->getReturn(), 'interrupted as soon as its own code runs again');
    }

    public function testClearedDeadlinesAndExemptCodeAreNotInterrupted(): void
    {
        $spin = $this->spin;
        $fiber = new \Fiber(static function () use ($spin): array {
            Deadline::arm(0.02);
            // Exempt (this file, as Weft's own src/ is in a worker): a tick later it is tried again.
            $until = \microtime(true) + 0.1;
            while (\microtime(true) < $until) {
            }
            try {
                $spin(30.0);
                $first = 'ran';
            } catch (DeadlinePassed) {
                $first = 'interrupted';
            }
            Deadline::clear();
            $spin(0.1);
            return [$first, 'ran after clear'];
        });
        $fiber->start();
        self::assertSame(['interrupted', 'ran after clear'], $fiber->getReturn());
    }

    public function testBadArgumentsAreRefused(): void
    {
        foreach ([
            static fn () => Deadline::configure(\stdClass::class, 'x'),
            static fn () => Deadline::configure('No\\Such\\ClassAnywhere', 'x'),
            static fn () => Deadline::configure(\Throwable::class, 'x'),
            static fn () => Deadline::configure(DeadlinePassed::class, 'x', '', 0.0),
            static fn () => Deadline::arm(0.0),
            static fn () => Deadline::arm(-1.0),
            static fn () => Deadline::track(-1, 'x'),
            static fn () => Deadline::lastWordsOn(\SIGKILL),
            static fn () => Deadline::lastWordsOn(0),
        ] as $i => $call) {
            try {
                $call();
                self::fail("call $i was accepted");
            } catch (\ValueError) {
                $this->addToAssertionCount(1);
            }
        }
    }

    public function testTheLastWordsAreClaimedOnce(): void
    {
        \pcntl_signal(\SIGXCPU, \SIG_IGN);
        try {
            Deadline::lastWordsOn(\SIGXCPU);
            $fiber = new \Fiber(static function (): void {
                Deadline::track(1_000_000, "HTTP/1.1 503 Service Unavailable\r\n\r\n");
                Deadline::track(1_000_001, 'replaced');
                \Fiber::suspend(Deadline::count());
                Deadline::clear();
            });
            self::assertSame(1, $fiber->start(), 'one entry per Fiber');
            $fiber->resume();
            self::assertSame(0, Deadline::count());
            self::assertTrue(Deadline::claimLastWords(), 'PHP answers: the thread must not');
            self::assertFalse(Deadline::claimLastWords());
        } finally {
            \pcntl_signal(\SIGXCPU, \SIG_DFL);
        }
    }

    public function testTheServersFacadeUsesRequestTimeout(): void
    {
        self::assertTrue(CodeDeadline::enable(2.5));
        $spin = $this->spin;
        $fiber = new \Fiber(static function () use ($spin): string {
            CodeDeadline::arm(0.02);
            try {
                $spin(30.0);
            } catch (RequestTimeout $e) {
                CodeDeadline::leave();
                return $e->getMessage();
            }
            return 'ran';
        });
        $fiber->start();
        self::assertSame('Request (--max-request-time) timed out after 2.5 s, interrupted while it ran', $fiber->getReturn());
        self::assertFalse(CodeDeadline::enable(0.0));
    }
}

final class DeadlinePassed extends \RuntimeException
{
}
