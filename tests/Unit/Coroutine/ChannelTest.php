<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Coroutine;

use Weft\Coroutine\Channel;
use Weft\Coroutine\ChannelClosed;
use Weft\Coroutine\Mutex;
use Weft\Coroutine\Timeout;
use Weft\Coroutine\WaitGroup;

use function Weft\go;
use function Weft\run;
use function Weft\sleep;

final class ChannelTest extends CoroutineTestCase
{
    public function testUnbufferedSendWaitsForAReceiver(): void
    {
        $log = run(static function (): array {
            $channel = new Channel();
            $log = [];
            go(static function () use ($channel, &$log): void {
                $log[] = 'send start';
                $channel->send('v');
                $log[] = 'send done';
            });
            $log[] = 'before receive';
            sleep(0.01);
            $log[] = 'received ' . $channel->receive();
            sleep(0.001);
            return $log;
        });
        self::assertSame(['send start', 'before receive', 'received v', 'send done'], $log);
    }

    public function testBufferedChannelKeepsOrderAndBlocksWhenFull(): void
    {
        $result = run(static function (): array {
            $channel = new Channel(2);
            $channel->send(1);
            $channel->send(2);
            self::assertCount(2, $channel);
            $third = go(static fn () => $channel->send(3));
            self::assertFalse($third->isFinished());
            $got = [$channel->receive(), $channel->receive(), $channel->receive()];
            $third->join();
            return $got;
        });
        self::assertSame([1, 2, 3], $result);
    }

    public function testCloseDrainsBufferThenFails(): void
    {
        $result = run(static function (): array {
            $channel = new Channel(3);
            $channel->send('a');
            $channel->send('b');
            $channel->close();
            $got = [$channel->receive(), $channel->receive()];
            try {
                $channel->receive();
            } catch (ChannelClosed) {
                $got[] = 'closed';
            }
            try {
                $channel->send('c');
            } catch (ChannelClosed) {
                $got[] = 'send refused';
            }
            return $got;
        });
        self::assertSame(['a', 'b', 'closed', 'send refused'], $result);
    }

    public function testCloseWakesWaitingReceivers(): void
    {
        $woken = run(static function (): int {
            $channel = new Channel();
            $woken = 0;
            $wg = new WaitGroup();
            for ($i = 0; $i < 3; $i++) {
                $wg->add();
                go(static function () use ($channel, &$woken, $wg): void {
                    try {
                        $channel->receive();
                    } catch (ChannelClosed) {
                        $woken++;
                    }
                    $wg->done();
                });
            }
            $channel->close();
            $wg->wait();
            return $woken;
        });
        self::assertSame(3, $woken);
    }

    public function testReceiveTimeoutLeavesTheChannelUsable(): void
    {
        $result = run(static function (): array {
            $channel = new Channel();
            try {
                $channel->receive(0.01);
            } catch (Timeout $e) {
                $timedOut = $e->getMessage();
            }
            go(static fn () => $channel->send('later'));
            return [$timedOut ?? null, $channel->receive(1)];
        });
        self::assertSame(['Channel receive timed out after 0.01 s', 'later'], $result);
    }

    public function testProducerConsumerDeliversEverythingOnce(): void
    {
        $sum = run(static function (): int {
            $channel = new Channel(8);
            $wg = new WaitGroup();
            for ($p = 0; $p < 4; $p++) {
                $wg->add();
                go(static function () use ($channel, $p, $wg): void {
                    for ($i = 1; $i <= 250; $i++) {
                        $channel->send($p * 1000 + $i);
                    }
                    $wg->done();
                });
            }
            go(static function () use ($wg, $channel): void {
                $wg->wait();
                $channel->close();
            });
            $sum = 0;
            try {
                while (true) {
                    $sum += $channel->receive();
                }
            } catch (ChannelClosed) {
            }
            return $sum;
        });
        $expected = 0;
        for ($p = 0; $p < 4; $p++) {
            for ($i = 1; $i <= 250; $i++) {
                $expected += $p * 1000 + $i;
            }
        }
        self::assertSame($expected, $sum);
    }

    public function testWaitGroupWaitsForAll(): void
    {
        $done = run(static function (): int {
            $wg = new WaitGroup();
            $done = 0;
            foreach ([0.03, 0.01, 0.02] as $delay) {
                $wg->add();
                go(static function () use ($delay, &$done, $wg): void {
                    sleep($delay);
                    $done++;
                    $wg->done();
                });
            }
            $wg->wait();
            return $done;
        });
        self::assertSame(3, $done);
    }

    public function testWaitGroupRejectsNegativeCount(): void
    {
        $this->expectException(\Error::class);
        (new WaitGroup())->done();
    }

    public function testMutexSerialisesCriticalSections(): void
    {
        $log = run(static function (): array {
            $mutex = new Mutex();
            $log = [];
            $wg = new WaitGroup();
            foreach (['a', 'b', 'c'] as $name) {
                $wg->add();
                go(static function () use ($mutex, $name, &$log, $wg): void {
                    $mutex->synchronized(static function () use ($name, &$log): void {
                        $log[] = "$name in";
                        sleep(0.005);
                        $log[] = "$name out";
                    });
                    $wg->done();
                });
            }
            $wg->wait();
            return $log;
        });
        self::assertSame(['a in', 'a out', 'b in', 'b out', 'c in', 'c out'], $log);
    }

    public function testMutexUnlockByAnotherCoroutineIsAnError(): void
    {
        $message = run(static function (): string {
            $mutex = new Mutex();
            $mutex->lock();
            try {
                go(static fn () => $mutex->unlock())->join();
            } catch (\Error $e) {
                return $e->getMessage();
            }
            return 'no error';
        });
        self::assertSame('Only the coroutine that locked the mutex can unlock it', $message);
    }
}
