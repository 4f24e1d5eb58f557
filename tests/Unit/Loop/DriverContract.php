<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Loop;

use PHPUnit\Framework\TestCase;
use Weft\Loop\Driver;
use Weft\Loop\InvalidWatcher;

/**
 * The contract every loop backend must pass. A backend's test extends this and builds its driver; a
 * backend whose mechanism is missing here skips in createDriver().
 */
abstract class DriverContract extends TestCase
{
    protected Driver $loop;

    abstract protected function createDriver(): Driver;

    protected function setUp(): void
    {
        $this->loop = $this->createDriver();
    }

    protected function tearDown(): void
    {
        // PHPUnit keeps every test object until the run ends: the driver and the streams its watchers
        // hold would stay open, and every process started later would inherit the descriptors.
        unset($this->loop);
    }

    public function testRunReturnsWhenNothingIsWatched(): void
    {
        $this->loop->run();
        self::assertFalse($this->loop->isRunning());
    }

    public function testDeferredCallbacksRunInOrderAndNotInline(): void
    {
        $log = [];
        $this->loop->defer(function () use (&$log): void {
            $log[] = 'a';
            $this->loop->defer(function () use (&$log): void {
                $log[] = 'c';
            });
        });
        $this->loop->defer(function () use (&$log): void {
            $log[] = 'b';
        });
        self::assertSame([], $log);
        $this->loop->run();
        self::assertSame(['a', 'b', 'c'], $log);
    }

    public function testTimersFireInExpiryThenCreationOrder(): void
    {
        $log = [];
        $this->loop->delay(0.03, function () use (&$log): void {
            $log[] = 'late';
        });
        $this->loop->delay(0.01, function () use (&$log): void {
            $log[] = 'first';
        });
        $this->loop->delay(0.01, function () use (&$log): void {
            $log[] = 'second';
        });
        $this->loop->run();
        self::assertSame(['first', 'second', 'late'], $log);
    }

    public function testDelayWaitsAtLeastItsTime(): void
    {
        $start = \hrtime(true);
        $fired = 0.0;
        $this->loop->delay(0.05, function () use (&$fired, $start): void {
            $fired = (\hrtime(true) - $start) / 1e9;
        });
        $this->loop->run();
        self::assertGreaterThanOrEqual(0.049, $fired);
    }

    public function testRepeatFiresUntilCancelled(): void
    {
        $count = 0;
        $this->loop->repeat(0.001, function (string $id) use (&$count): void {
            if (++$count === 5) {
                $this->loop->cancel($id);
            }
        });
        $this->loop->run();
        self::assertSame(5, $count);
    }

    public function testDisabledWatcherDoesNotFireOrKeepTheLoopAlive(): void
    {
        $fired = false;
        $id = $this->loop->delay(0.001, function () use (&$fired): void {
            $fired = true;
        });
        $this->loop->disable($id);
        $this->loop->run();
        self::assertFalse($fired);
        $this->loop->enable($id);
        $this->loop->run();
        self::assertTrue($fired);
    }

    public function testUnreferencedWatcherDoesNotKeepTheLoopAlive(): void
    {
        $fired = false;
        $id = $this->loop->delay(10, function () use (&$fired): void {
            $fired = true;
        });
        $this->loop->unreference($id);
        $start = \hrtime(true);
        $this->loop->run();
        self::assertFalse($fired);
        self::assertLessThan(5.0, (\hrtime(true) - $start) / 1e9);
        $this->loop->cancel($id);
    }

    public function testReadableWatcherFiresWhenDataArrives(): void
    {
        [$a, $b] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        \stream_set_blocking($b, false);
        $received = null;
        $this->loop->onReadable($b, function (string $id, $stream) use (&$received): void {
            $received = \fread($stream, 100);
            $this->loop->cancel($id);
        });
        $this->loop->delay(0.01, function () use ($a): void {
            \fwrite($a, 'ping');
        });
        $this->loop->run();
        self::assertSame('ping', $received);
    }

    public function testWritableWatcherFiresOnAnEmptySendBuffer(): void
    {
        [$a] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        $fired = 0;
        $this->loop->onWritable($a, function (string $id) use (&$fired): void {
            $fired++;
            $this->loop->cancel($id);
        });
        $this->loop->run();
        self::assertSame(1, $fired);
    }

    public function testDisablingAnotherWatcherInTheSameTickSuppressesIt(): void
    {
        [$a, $b] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        \fwrite($a, 'x');
        $log = [];
        $second = null;
        $first = $this->loop->onReadable($b, function (string $id) use (&$log, &$second): void {
            $log[] = 'first';
            $this->loop->cancel($id);
            $this->loop->cancel($second);
        });
        $second = $this->loop->onReadable($b, function (string $id) use (&$log): void {
            $log[] = 'second';
            $this->loop->cancel($id);
        });
        $this->loop->run();
        self::assertSame(['first'], $log);
        self::assertNotSame($first, $second);
    }

    public function testStopEndsRunAndKeepsPendingWork(): void
    {
        $log = [];
        $this->loop->defer(function () use (&$log): void {
            $log[] = 1;
            $this->loop->stop();
        });
        $this->loop->defer(function () use (&$log): void {
            $log[] = 2;
        });
        $this->loop->run();
        self::assertSame([1], $log);
        $this->loop->run();
        self::assertSame([1, 2], $log);
    }

    public function testExceptionFromCallbackIsRethrownByRun(): void
    {
        $this->loop->defer(static function (): void {
            throw new \LogicException('boom');
        });
        $this->expectException(\LogicException::class);
        $this->expectExceptionMessage('boom');
        $this->loop->run();
    }

    public function testErrorHandlerReceivesCallbackExceptions(): void
    {
        $seen = [];
        $this->loop->setErrorHandler(static function (\Throwable $e) use (&$seen): void {
            $seen[] = $e->getMessage();
        });
        $this->loop->defer(static function (): void {
            throw new \RuntimeException('one');
        });
        $this->loop->delay(0.001, static function (): void {
            throw new \RuntimeException('two');
        });
        $this->loop->run();
        self::assertSame(['one', 'two'], $seen);
    }

    public function testUnknownIdsAreRejectedButCancelIsIdempotent(): void
    {
        $id = $this->loop->delay(1, static function (): void {
        });
        $this->loop->cancel($id);
        $this->loop->cancel($id);
        $this->expectException(InvalidWatcher::class);
        $this->loop->enable($id);
    }

    public function testSignalWatcherReceivesTheSignal(): void
    {
        if (!\function_exists('posix_kill')) {
            self::markTestSkipped('posix extension missing');
        }
        $received = null;
        $id = $this->loop->onSignal(\SIGUSR2, function (string $id, int $signal) use (&$received): void {
            $received = $signal;
            $this->loop->cancel($id);
        });
        $this->loop->delay(0.01, static function (): void {
            \posix_kill(\getmypid(), \SIGUSR2);
        });
        $this->loop->run();
        self::assertSame(\SIGUSR2, $received);
        self::assertIsString($id);
    }

    public function testWatcherCountTracksState(): void
    {
        $id = $this->loop->delay(1, static function (): void {
        });
        self::assertSame(['enabled' => 1, 'referenced' => 1, 'total' => 1], $this->loop->watcherCount());
        $this->loop->disable($id);
        self::assertSame(['enabled' => 0, 'referenced' => 0, 'total' => 1], $this->loop->watcherCount());
        $this->loop->cancel($id);
        self::assertSame(['enabled' => 0, 'referenced' => 0, 'total' => 0], $this->loop->watcherCount());
    }

    public function testManyTimersAddAndCancelWithoutLeaking(): void
    {
        $ids = [];
        for ($i = 0; $i < 1000; $i++) {
            $ids[] = $this->loop->delay(1 + $i / 1000, static function (): void {
            });
        }
        foreach ($ids as $i => $id) {
            if ($i % 2 === 0) {
                $this->loop->cancel($id);
            }
        }
        $fired = 0;
        $this->loop->delay(0.001, function () use (&$fired, $ids): void {
            $fired++;
            foreach ($ids as $id) {
                $this->loop->cancel($id);
            }
        });
        $this->loop->run();
        self::assertSame(1, $fired);
        self::assertSame(0, $this->loop->watcherCount()['total']);
    }

    // ---- MUST clauses, one test each (the contract in src/Loop/Driver.php, deepened in the manner of
    // revolt/event-loop's driver suite). Every backend runs every one of them.

    /** @return array{resource, resource} */
    protected static function socketPair(): array
    {
        $pair = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        \stream_set_blocking($pair[0], false);
        \stream_set_blocking($pair[1], false);
        return $pair;
    }

    public function testNoCallbackRunsInsideTheMethodThatRegistersIt(): void
    {
        [$a, $b] = self::socketPair();
        \fwrite($a, 'x');
        $log = [];
        $ids = [
            $this->loop->defer(static function () use (&$log): void {
                $log[] = 'defer';
            }),
            $this->loop->delay(0, static function () use (&$log): void {
                $log[] = 'delay';
            }),
            $this->loop->onReadable($b, function (string $id) use (&$log): void {
                $log[] = 'readable';
                $this->loop->cancel($id);
            }),
            $this->loop->onWritable($a, function (string $id) use (&$log): void {
                $log[] = 'writable';
                $this->loop->cancel($id);
            }),
        ];
        self::assertSame([], $log);
        self::assertCount(4, \array_unique($ids));
        $this->loop->run();
        self::assertSame('defer', $log[0], 'deferred callbacks run before the loop waits');
        self::assertEqualsCanonicalizing(['defer', 'delay', 'readable', 'writable'], $log);
    }

    public function testCallbacksReceiveTheirIdAndTheirStream(): void
    {
        [$a, $b] = self::socketPair();
        \fwrite($a, 'x');
        $got = [];
        $rid = $this->loop->onReadable($b, function (string $id, mixed $stream) use (&$got): void {
            $got['read'] = [$id, $stream];
            $this->loop->cancel($id);
        });
        $did = $this->loop->defer(static function (string $id) use (&$got): void {
            $got['defer'] = [$id];
        });
        $tid = $this->loop->delay(0.001, static function (string $id) use (&$got): void {
            $got['delay'] = [$id];
        });
        $this->loop->run();
        self::assertSame([$rid, $b], $got['read']);
        self::assertSame([$did], $got['defer']);
        self::assertSame([$tid], $got['delay']);
    }

    public function testADeferredCallbackDisabledBeforeItsTickWaitsForEnable(): void
    {
        $log = [];
        $id = $this->loop->defer(static function () use (&$log): void {
            $log[] = 'deferred';
        });
        $this->loop->disable($id);
        $this->loop->run();
        self::assertSame([], $log, 'a disabled deferred callback neither runs nor keeps run() going');
        self::assertSame(1, $this->loop->watcherCount()['total']);
        $this->loop->enable($id);
        $this->loop->run();
        self::assertSame(['deferred'], $log);
        self::assertSame(0, $this->loop->watcherCount()['total'], 'a deferred callback is gone once it ran');
    }

    public function testADeferredCallbackCancelledByAnEarlierOneOfTheSameTickNeverRuns(): void
    {
        $log = [];
        $second = null;
        $this->loop->defer(function () use (&$log, &$second): void {
            $log[] = 'first';
            $this->loop->cancel($second);
        });
        $second = $this->loop->defer(static function () use (&$log): void {
            $log[] = 'second';
        });
        $this->loop->run();
        self::assertSame(['first'], $log);
    }

    public function testACallbackDeferredFromATimerRunsBeforeTheNextTimer(): void
    {
        $log = [];
        $this->loop->delay(0.01, function () use (&$log): void {
            $log[] = 'timer 1';
            $this->loop->defer(static function () use (&$log): void {
                $log[] = 'deferred by timer 1';
            });
        });
        $this->loop->delay(0.05, static function () use (&$log): void {
            $log[] = 'timer 2';
        });
        $this->loop->run();
        self::assertSame(['timer 1', 'deferred by timer 1', 'timer 2'], $log);
    }

    public function testANegativeOrZeroDelayFiresOnTheNextTick(): void
    {
        $log = [];
        $this->loop->delay(-1.0, static function () use (&$log): void {
            $log[] = 'negative';
        });
        $this->loop->delay(0.0, static function () use (&$log): void {
            $log[] = 'zero';
        });
        $this->loop->run();
        self::assertSame(['negative', 'zero'], $log, 'same expiry: creation order');
    }

    public function testATimerIsNeverEarly(): void
    {
        $times = [];
        foreach ([0.002, 0.011, 0.023] as $seconds) {
            $start = \hrtime(true);
            $this->loop->delay($seconds, static function () use (&$times, $start, $seconds): void {
                $times[] = [$seconds, (\hrtime(true) - $start) / 1e9];
            });
        }
        $this->loop->run();
        self::assertCount(3, $times);
        foreach ($times as [$asked, $took]) {
            self::assertGreaterThanOrEqual($asked, $took, "a $asked s timer fired after $took s");
        }
    }

    public function testARepeatReArmsFromItsCallNotFromItsLastExpiry(): void
    {
        $calls = [];
        $this->loop->repeat(0.01, function (string $id) use (&$calls): void {
            $calls[] = \hrtime(true);
            if (\count($calls) === 1) {
                \usleep(35_000); // one slow call: three and a half intervals
            }
            if (\count($calls) === 4) {
                $this->loop->cancel($id);
            }
        });
        $this->loop->run();
        self::assertCount(4, $calls);
        // The call after the slow one comes at once (it was due), and no make-up burst follows it: each
        // later call starts at least one interval after the previous one started.
        self::assertGreaterThanOrEqual(0.035, ($calls[1] - $calls[0]) / 1e9);
        for ($i = 2; $i < 4; $i++) {
            self::assertGreaterThanOrEqual(0.0099, ($calls[$i] - $calls[$i - 1]) / 1e9, "call $i came in a burst");
        }
    }

    public function testARepeatCancelledByItsOwnCallbackNeverRunsAgain(): void
    {
        $count = 0;
        $this->loop->repeat(0.001, function (string $id) use (&$count): void {
            $count++;
            $this->loop->cancel($id);
            $this->loop->cancel($id); // twice: harmless
        });
        $this->loop->delay(0.02, static function (): void {
        });
        $this->loop->run();
        self::assertSame(1, $count);
    }

    public function testATimerCancelledByAnotherOfTheSameMillisecondNeverRuns(): void
    {
        $log = [];
        $second = null;
        $this->loop->delay(0.005, function () use (&$log, &$second): void {
            $log[] = 'first';
            $this->loop->cancel($second);
        });
        $second = $this->loop->delay(0.005, static function () use (&$log): void {
            $log[] = 'second';
        });
        $this->loop->run();
        self::assertSame(['first'], $log);
    }

    public function testATimerDisabledAndEnabledAgainCountsItsDelayFromEnable(): void
    {
        $fired = null;
        $start = \hrtime(true);
        $id = $this->loop->delay(0.03, static function () use (&$fired, $start): void {
            $fired = (\hrtime(true) - $start) / 1e9;
        });
        $this->loop->disable($id);
        $this->loop->delay(0.02, function () use ($id): void {
            $this->loop->enable($id);
        });
        $this->loop->run();
        self::assertNotNull($fired);
        self::assertGreaterThanOrEqual(0.05, $fired);
    }

    public function testEnableAndDisableAreIdempotent(): void
    {
        $count = 0;
        $id = $this->loop->delay(0.001, static function () use (&$count): void {
            $count++;
        });
        $this->loop->enable($id);
        $this->loop->disable($id);
        $this->loop->disable($id);
        self::assertSame(['enabled' => 0, 'referenced' => 0, 'total' => 1], $this->loop->watcherCount());
        $this->loop->enable($id);
        $this->loop->enable($id);
        self::assertSame(['enabled' => 1, 'referenced' => 1, 'total' => 1], $this->loop->watcherCount());
        $this->loop->run();
        self::assertSame(1, $count);
    }

    public function testReferenceAndUnreferenceAreIdempotentAndSurviveDisable(): void
    {
        $id = $this->loop->repeat(0.001, static function (): void {
        });
        $this->loop->unreference($id);
        $this->loop->unreference($id);
        self::assertSame(0, $this->loop->watcherCount()['referenced']);
        $this->loop->disable($id);
        $this->loop->enable($id);
        self::assertSame(0, $this->loop->watcherCount()['referenced'], 'enable() keeps it unreferenced');
        $this->loop->run(); // returns at once: only an unreferenced watcher is left
        $this->loop->reference($id);
        $this->loop->reference($id);
        self::assertSame(1, $this->loop->watcherCount()['referenced']);
        $this->loop->cancel($id);
        self::assertSame(['enabled' => 0, 'referenced' => 0, 'total' => 0], $this->loop->watcherCount());
    }

    public function testAnUnreferencedWatcherStillFiresWhileAReferencedOneKeepsTheLoopRunning(): void
    {
        $count = 0;
        $id = $this->loop->repeat(0.002, static function () use (&$count): void {
            $count++;
        });
        $this->loop->unreference($id);
        $this->loop->delay(0.03, static function (): void {
        });
        $this->loop->run();
        self::assertGreaterThanOrEqual(2, $count);
    }

    /** @return iterable<string, array{string}> */
    public static function unknownIds(): iterable
    {
        foreach (['', 'w', 'x1', 'w99999', 'w-1', 'w01', '1'] as $id) {
            yield "'$id'" => [$id];
        }
    }

    #[\PHPUnit\Framework\Attributes\DataProvider('unknownIds')]
    public function testEveryMethodButCancelRejectsAnUnknownId(string $id): void
    {
        $this->loop->cancel($id);
        foreach (['enable', 'disable', 'reference', 'unreference'] as $method) {
            try {
                $this->loop->{$method}($id);
                self::fail("$method('$id') did not throw");
            } catch (InvalidWatcher $e) {
                self::assertStringContainsString("'$id'", $e->getMessage());
            }
        }
    }

    public function testAnIdOfAFinishedWatcherIsUnknown(): void
    {
        $delay = $this->loop->delay(0, static function (): void {
        });
        $defer = $this->loop->defer(static function (): void {
        });
        $this->loop->run();
        foreach ([$delay, $defer] as $id) {
            try {
                $this->loop->enable($id);
                self::fail("enable($id) of a finished watcher did not throw");
            } catch (InvalidWatcher) {
                self::assertTrue(true);
            }
        }
    }

    public function testStopFromACallbackEndsRunAfterTheCurrentCallbackAndRunCanResume(): void
    {
        $log = [];
        $this->loop->defer(function () use (&$log): void {
            $log[] = 'a';
            $this->loop->stop();
            $log[] = 'a continues';
            self::assertTrue($this->loop->isRunning());
        });
        $this->loop->defer(static function () use (&$log): void {
            $log[] = 'b';
        });
        $this->loop->run();
        self::assertFalse($this->loop->isRunning());
        self::assertSame(['a', 'a continues'], $log);
        $this->loop->run();
        self::assertSame(['a', 'a continues', 'b'], $log);
    }

    public function testStopBeforeRunDoesNotPreventTheNextRun(): void
    {
        $ran = false;
        $this->loop->stop();
        $this->loop->defer(static function () use (&$ran): void {
            $ran = true;
        });
        $this->loop->run();
        self::assertTrue($ran);
    }

    public function testRunFromInsideACallbackIsAClearError(): void
    {
        $error = null;
        $this->loop->defer(function () use (&$error): void {
            try {
                $this->loop->run();
            } catch (\Error $e) {
                $error = $e->getMessage();
            }
        });
        $this->loop->run();
        self::assertSame('The event loop is already running', $error);
        self::assertFalse($this->loop->isRunning());
    }

    public function testRunFromAFiberStartedByACallbackIsTheSameError(): void
    {
        $error = null;
        $this->loop->defer(function () use (&$error): void {
            $fiber = new \Fiber(function () use (&$error): void {
                try {
                    $this->loop->run();
                } catch (\Error $e) {
                    $error = $e->getMessage();
                }
            });
            $fiber->start();
        });
        $this->loop->run();
        self::assertSame('The event loop is already running', $error);
    }

    public function testCallbacksMaySuspendAndResumeFibers(): void
    {
        $log = [];
        $fiber = new \Fiber(function () use (&$log): void {
            $log[] = 'fiber start';
            $value = \Fiber::suspend('waiting');
            $log[] = "fiber got $value";
            // Registering from inside a Fiber is as good as from anywhere.
            $this->loop->delay(0.001, static function () use (&$log): void {
                $log[] = 'timer set by the fiber';
            });
            $value = \Fiber::suspend('waiting again');
            $log[] = "fiber got $value";
        });
        [$a, $b] = self::socketPair();
        $this->loop->defer(static function () use ($fiber, &$log): void {
            $log[] = 'started: ' . $fiber->start();
        });
        $this->loop->onReadable($b, function (string $id, $stream) use ($fiber, &$log): void {
            $this->loop->cancel($id);
            $log[] = 'resumed: ' . $fiber->resume(\fread($stream, 10));
            $this->loop->delay(0.005, static function () use ($fiber): void {
                $fiber->resume('from a timer');
            });
        });
        $this->loop->delay(0.002, static function () use ($a): void {
            \fwrite($a, 'data');
        });
        $this->loop->run();
        self::assertTrue($fiber->isTerminated());
        self::assertSame([
            'fiber start', 'started: waiting', 'fiber got data', 'resumed: waiting again',
            'timer set by the fiber', 'fiber got from a timer',
        ], $log);
    }

    public function testAnExceptionThrownInsideAFiberReachesTheErrorHandlerThroughItsCallback(): void
    {
        $seen = [];
        $this->loop->setErrorHandler(static function (\Throwable $e) use (&$seen): void {
            $seen[] = $e->getMessage();
        });
        $fiber = new \Fiber(static function (): void {
            \Fiber::suspend();
            throw new \DomainException('from the fiber');
        });
        $this->loop->defer(static function () use ($fiber): void {
            $fiber->start();
        });
        $this->loop->delay(0.001, static function () use ($fiber): void {
            $fiber->resume();
        });
        $after = false;
        $this->loop->delay(0.005, static function () use (&$after): void {
            $after = true;
        });
        $this->loop->run();
        self::assertSame(['from the fiber'], $seen);
        self::assertTrue($after, 'the loop goes on after the handler');
    }

    public function testRunMayItselfRunInsideAFiberThatACallbackSuspends(): void
    {
        $log = [];
        $fiber = new \Fiber(function () use (&$log): void {
            $this->loop->defer(static function () use (&$log): void {
                $log[] = 'suspending the fiber that runs the loop';
                \Fiber::suspend('out');
                $log[] = 'back in the loop';
            });
            $this->loop->run();
            $log[] = 'run returned';
        });
        self::assertSame('out', $fiber->start());
        self::assertTrue($this->loop->isRunning(), 'suspended inside run(): still running');
        $fiber->resume();
        self::assertTrue($fiber->isTerminated());
        self::assertSame(['suspending the fiber that runs the loop', 'back in the loop', 'run returned'], $log);
        self::assertFalse($this->loop->isRunning());
    }

    public function testAnExceptionWithoutAHandlerStopsRunAfterTheCurrentCallbackOnly(): void
    {
        $log = [];
        $this->loop->defer(static function () use (&$log): void {
            $log[] = 'throws';
            throw new \LogicException('first');
        });
        $this->loop->defer(static function () use (&$log): void {
            $log[] = 'later';
        });
        try {
            $this->loop->run();
            self::fail('run() did not rethrow');
        } catch (\LogicException $e) {
            self::assertSame('first', $e->getMessage());
        }
        self::assertFalse($this->loop->isRunning());
        self::assertSame(['throws'], $log);
        $this->loop->run();
        self::assertSame(['throws', 'later'], $log, 'the rest runs on the next run()');
    }

    public function testAnExceptionFromTheErrorHandlerIsRethrownByRun(): void
    {
        $this->loop->setErrorHandler(static function (\Throwable $e): void {
            throw new \RuntimeException('handler: ' . $e->getMessage(), 0, $e);
        });
        $this->loop->delay(0, static function (): void {
            throw new \LogicException('callback');
        });
        try {
            $this->loop->run();
            self::fail('run() did not rethrow');
        } catch (\RuntimeException $e) {
            self::assertSame('handler: callback', $e->getMessage());
            self::assertInstanceOf(\LogicException::class, $e->getPrevious());
        }
    }

    public function testTheErrorHandlerCanBeRemoved(): void
    {
        $this->loop->setErrorHandler(static function (): void {
            self::fail('removed handler called');
        });
        $this->loop->setErrorHandler(null);
        $this->loop->defer(static function (): void {
            throw new \LogicException('unhandled');
        });
        $this->expectException(\LogicException::class);
        $this->loop->run();
    }

    public function testExitInsideACallbackEndsTheProcessWithItsStatus(): void
    {
        $root = \dirname(__DIR__, 3);
        $class = \get_class($this->loop);
        $ext = \extension_loaded('weft') ? '-d extension=' . \escapeshellarg("$root/ext/modules/weft.so") : '';
        $code = "require '$root/vendor/autoload.php'; \$l = new \\$class();"
            . ' $l->setErrorHandler(function () { echo "handler"; });'
            . ' $l->delay(0.001, function () { echo "timer"; exit(7); });'
            . ' $l->delay(0.001, function () { echo "next"; });'
            . ' register_shutdown_function(function () { echo "-shutdown"; });'
            . ' try { $l->run(); } catch (\Throwable) { echo "caught"; } echo "after";';
        \exec(\PHP_BINARY . " -n $ext -r " . \escapeshellarg($code) . ' 2>&1', $out, $status);
        self::assertSame(7, $status, \implode("\n", $out));
        // exit() is not an exception: no error handler, no other callback, no catch, no code after run();
        // shutdown functions run as for any exit().
        self::assertSame('timer-shutdown', \implode('', $out));
    }

    public function testIsRunningIsTrueOnlyInsideRun(): void
    {
        $inside = null;
        $this->loop->defer(function () use (&$inside): void {
            $inside = $this->loop->isRunning();
        });
        self::assertFalse($this->loop->isRunning());
        $this->loop->run();
        self::assertTrue($inside);
        self::assertFalse($this->loop->isRunning());
    }

    public function testOwesWorkWhileEventsOfTheDispatchOrDeferredCallbacksAreLeft(): void
    {
        self::assertFalse($this->loop->owesWork(), 'an idle loop owes nothing');
        [$a, $b] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        [$c, $d] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        \fwrite($b, 'x');
        \fwrite($d, 'y');
        $seen = [];
        foreach ([$a, $c] as $stream) {
            $this->loop->onReadable($stream, function (string $id, $stream) use (&$seen): void {
                // Both streams are ready in one dispatch: the first callback sees the second owed.
                $seen[] = $this->loop->owesWork();
                \fread($stream, 1);
                $this->loop->cancel($id);
            });
        }
        $this->loop->run();
        self::assertSame([true, false], $seen, 'the first of two ready streams sees the other owed, the last none');

        $seen = [];
        $this->loop->defer(function () use (&$seen): void {
            $seen[] = $this->loop->owesWork();
            $this->loop->defer(function () use (&$seen): void {
                $seen[] = $this->loop->owesWork();
            });
            $seen[] = $this->loop->owesWork();
        });
        $this->loop->run();
        self::assertSame([false, true, false], $seen, 'a deferred callback queued is owed until it runs');
        self::assertFalse($this->loop->owesWork());
    }

    public function testNowIsMonotonicAndUpdatedEveryTick(): void
    {
        $seen = [];
        $before = $this->loop->now();
        $this->loop->delay(0.01, function () use (&$seen): void {
            $seen[] = $this->loop->now();
        });
        $this->loop->delay(0.03, function () use (&$seen): void {
            $seen[] = $this->loop->now();
        });
        $this->loop->run();
        self::assertCount(2, $seen);
        self::assertGreaterThan($before, $seen[0]);
        self::assertGreaterThan($seen[0], $seen[1]);
        self::assertGreaterThanOrEqual(0.03, $seen[1] - $before);
        self::assertEqualsWithDelta(\hrtime(true) / 1e9, $this->loop->now(), 1.0, 'the same clock as hrtime()');
    }

    public function testSeveralWatchersOnOneStreamFireInTheOrderTheyWereCreated(): void
    {
        [$a, $b] = self::socketPair();
        \fwrite($a, 'x');
        $log = [];
        foreach (['one', 'two', 'three'] as $name) {
            $this->loop->onReadable($b, function (string $id) use (&$log, $name): void {
                $log[] = $name;
                $this->loop->cancel($id);
            });
        }
        $this->loop->run();
        self::assertSame(['one', 'two', 'three'], $log);
    }

    public function testAWatcherCancellingAnotherOnTheSameStreamSuppressesIt(): void
    {
        [$a, $b] = self::socketPair();
        \fwrite($a, 'x');
        $log = [];
        $second = null;
        $first = $this->loop->onReadable($b, function (string $id) use (&$log, &$second): void {
            $log[] = 'first';
            $this->loop->cancel($second);
            $this->loop->cancel($id);
        });
        $second = $this->loop->onReadable($b, static function () use (&$log): void {
            $log[] = 'second';
        });
        $this->loop->run();
        self::assertSame(['first'], $log);
        self::assertNotSame($first, $second);
    }

    public function testAWatcherAddedDuringADispatchFiresOnlyInALaterTick(): void
    {
        [$a, $b] = self::socketPair();
        \fwrite($a, 'x');
        $log = [];
        $this->loop->onReadable($b, function (string $id, $stream) use (&$log): void {
            $log[] = 'first';
            $this->loop->cancel($id);
            $this->loop->onReadable($stream, function (string $id, $stream) use (&$log): void {
                $log[] = 'added';
                \fread($stream, 10);
                $this->loop->cancel($id);
            });
            $this->loop->defer(static function () use (&$log): void {
                $log[] = 'deferred';
            });
        });
        $this->loop->run();
        self::assertSame(['first', 'deferred', 'added'], $log);
    }

    public function testAStreamClosedWhileWatchedWakesItsWatcherOnceAndTheWatcherIsGone(): void
    {
        [$a, $b] = self::socketPair();
        $calls = 0;
        $this->loop->onReadable($b, static function () use (&$calls): void {
            $calls++;
        });
        $this->loop->delay(0.005, static function () use ($b): void {
            \fclose($b);
        });
        $this->loop->run(); // returns: the watcher was cancelled after its one wake-up
        self::assertSame(1, $calls);
        self::assertSame(0, $this->loop->watcherCount()['total']);
        unset($a);
    }

    public function testARegularFileIsAlwaysReadyAndWritable(): void
    {
        $file = \tmpfile();
        \fwrite($file, 'abc');
        \rewind($file);
        $log = [];
        $this->loop->onReadable($file, function (string $id) use (&$log): void {
            $log[] = 'readable';
            $this->loop->cancel($id);
        });
        $this->loop->onWritable($file, function (string $id) use (&$log): void {
            $log[] = 'writable';
            $this->loop->cancel($id);
        });
        $this->loop->run();
        self::assertSame(['readable', 'writable'], $log);
    }

    public function testRegisteringAClosedOrNonStreamValueIsATypeError(): void
    {
        $closed = \fopen('php://memory', 'r');
        \fclose($closed);
        foreach ([$closed, 42, 'stream', null] as $value) {
            try {
                $this->loop->onReadable($value, static function (): void {
                });
                self::fail('accepted ' . \get_debug_type($value));
            } catch (\TypeError) {
                self::assertTrue(true);
            }
        }
        self::assertSame(0, $this->loop->watcherCount()['total']);
    }

    public function testADisabledSignalWatcherDoesNotReceiveAndOthersOfTheSignalDo(): void
    {
        if (!\function_exists('posix_kill') || !\function_exists('pcntl_signal')) {
            self::markTestSkipped('posix/pcntl extension missing');
        }
        $log = [];
        $off = $this->loop->onSignal(\SIGUSR1, static function () use (&$log): void {
            $log[] = 'disabled one';
        });
        $this->loop->disable($off);
        $ids = [];
        foreach (['a', 'b'] as $name) {
            $ids[] = $this->loop->onSignal(\SIGUSR1, static function (string $id, int $signal) use (&$log, $name): void {
                $log[] = "$name:$signal";
            });
        }
        $this->loop->delay(0.005, static function (): void {
            \posix_kill(\getmypid(), \SIGUSR1);
        });
        $this->loop->delay(0.2, function () use ($ids, $off): void {
            foreach ([...$ids, $off] as $id) {
                $this->loop->cancel($id);
            }
        });
        $this->loop->run();
        self::assertSame(['a:' . \SIGUSR1, 'b:' . \SIGUSR1], $log);
        // Every watcher of the signal gone: its default disposition is back.
        self::assertSame(\SIG_DFL, \pcntl_signal_get_handler(\SIGUSR1));
    }

    public function testAnUnreferencedSignalWatcherDoesNotKeepTheLoopAlive(): void
    {
        if (!\function_exists('pcntl_signal')) {
            self::markTestSkipped('pcntl extension missing');
        }
        $id = $this->loop->onSignal(\SIGUSR1, static function (): void {
        });
        $this->loop->unreference($id);
        $start = \hrtime(true);
        $this->loop->run();
        self::assertLessThan(0.5, (\hrtime(true) - $start) / 1e9);
        $this->loop->cancel($id);
    }

    public function testCallbacksThatReleaseTheLastReferenceToTheirOwnClosureAreSafe(): void
    {
        $holder = new \stdClass();
        $count = 0;
        $holder->callback = function (string $id) use ($holder, &$count): void {
            $count++;
            $this->loop->cancel($id);
            $holder->callback = null; // the closure now running is referenced only by the engine
            \gc_collect_cycles();
        };
        $this->loop->delay(0.001, $holder->callback);
        $this->loop->defer($holder->callback);
        $this->loop->run();
        self::assertSame(2, $count);
    }

    public function testALoopWithCyclesThroughItsCallbacksIsCollected(): void
    {
        $driver = $this->createDriver();
        $ref = \WeakReference::create($driver);
        $driver->repeat(1.0, static function () use ($driver): void {
        });
        $driver->defer(static function () use ($driver): void {
        });
        unset($driver);
        \gc_collect_cycles();
        self::assertNull($ref->get(), 'the loop and its callbacks form a cycle the collector must see');
    }
}
