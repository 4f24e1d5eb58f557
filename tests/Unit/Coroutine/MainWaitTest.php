<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Coroutine;

use Weft\Coroutine\Channel;
use Weft\Coroutine\DeadlockError;
use Weft\Coroutine\IoWaiter;
use Weft\Coroutine\Mutex;
use Weft\Coroutine\Timeout;
use Weft\Coroutine\WaitGroup;
use Weft\Loop\NativeDriver;
use Weft\Loop\Loop;

use function Weft\go;
use function Weft\sleep;

/** {main} waits through the same path as a coroutine: its wait runs the loop until the event arrives. */
final class MainWaitTest extends CoroutineTestCase
{
    public function testAWaitFromMainRunsTheLoopMeanwhile(): void
    {
        $channel = new Channel();
        $ticks = 0;
        $timer = Loop::repeat(0.005, static function () use (&$ticks): void {
            $ticks++;
        });
        go(static function () use ($channel): void {
            sleep(0.05);
            $channel->send('from a coroutine');
        });
        self::assertSame('from a coroutine', $channel->receive());
        Loop::cancel($timer);
        self::assertGreaterThan(0, $ticks, 'the loop ran while {main} waited');
    }

    public function testMainCanWaitForAMutexHeldByACoroutine(): void
    {
        $mutex = new Mutex();
        $order = [];
        go(static function () use ($mutex, &$order): void {
            $mutex->lock();
            $order[] = 'coroutine locked';
            sleep(0.02);
            $order[] = 'coroutine unlocks';
            $mutex->unlock();
        });
        $mutex->lock();
        $order[] = 'main locked';
        $mutex->unlock();
        self::assertSame(['coroutine locked', 'coroutine unlocks', 'main locked'], $order);
    }

    public function testTimeoutsAndCancellationReachMain(): void
    {
        $group = new WaitGroup();
        $group->add();
        try {
            $group->wait(0.02);
            self::fail('no timeout');
        } catch (Timeout $e) {
            self::assertStringContainsString('timed out after 0.02 s', $e->getMessage());
        }
        $group->done();
        $group->wait();
        self::assertSame(0, $group->count());
    }

    public function testAWaitNothingCanEndIsADeadlockNotAHang(): void
    {
        $this->expectException(DeadlockError::class);
        (new Channel())->receive();
    }

    public function testWaitingInsideALoopCallbackIsAnError(): void
    {
        $error = null;
        Loop::defer(static function () use (&$error): void {
            try {
                sleep(0.001);
            } catch (\Error $e) {
                $error = $e->getMessage();
            }
        });
        Loop::run();
        self::assertStringContainsString('Cannot wait inside an event loop callback', (string) $error);
    }

    public function testDescriptorsAbove1024WorkFromMainOnEpoll(): void
    {
        if (!\Weft\Loop\DriverFactory::epollAvailable()) {
            self::markTestSkipped('the native extension is not loaded');
        }
        Loop::reset('epoll');
        $ballast = [];
        while (true) {
            $pair = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
            self::assertNotFalse($pair, 'ulimit -n too low for this test');
            if ((int) \get_resource_id($pair[1]) > 1100 && \count($ballast) > 520) {
                break;
            }
            $ballast[] = $pair;
        }
        [$a, $b] = $pair;
        \stream_set_blocking($b, false);
        Loop::delay(0.01, static function () use ($a): void {
            \fwrite($a, 'late');
        });
        (new IoWaiter($b))->readable(1.0);
        self::assertSame('late', \fread($b, 10));
        $ballast = null;
    }
}
