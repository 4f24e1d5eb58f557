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
}
