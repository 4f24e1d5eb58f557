<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Client\Redis;

use PHPUnit\Framework\Attributes\DataProvider;
use Weft\Client\Redis\ConnectionLost;
use Weft\Client\Redis\Message;
use Weft\Coroutine\ConcurrentUse;

use function Weft\go;
use function Weft\run;
use function Weft\sleep;

final class SubscriberTest extends RedisTestCase
{
    #[DataProvider('protocols')]
    public function testMessagesAcrossTwoConnectionsInCoroutines(int $protocol): void
    {
        $channel = $this->key('news');
        $received = run(function () use ($protocol, $channel): array {
            $subscriber = $this->subscriber($protocol);
            $publisher = $this->connect($protocol);
            $subscriber->subscribe($channel, $channel . ':other');
            self::assertSame([$channel, $channel . ':other'], $subscriber->channels());

            $listener = go(static function () use ($subscriber): array {
                $got = [];
                foreach ($subscriber as $message) {
                    $got[] = $message;
                    if (\count($got) === 3) {
                        break;
                    }
                }
                return $got;
            });
            go(static function () use ($publisher, $channel): void {
                foreach (['one', 'two', "three\r\n\0"] as $payload) {
                    self::assertSame(1, $publisher->publish($channel, $payload));
                    sleep(0.01);
                }
            });
            return $listener->join();
        });
        self::assertCount(3, $received);
        self::assertContainsOnlyInstancesOf(Message::class, $received);
        self::assertSame(['one', 'two', "three\r\n\0"], \array_map(static fn (Message $m) => $m->payload, $received));
        self::assertSame($channel, $received[0]->channel);
        self::assertNull($received[0]->pattern);
    }

    #[DataProvider('protocols')]
    public function testPatternSubscriptions(int $protocol): void
    {
        $subscriber = $this->subscriber($protocol);
        $publisher = $this->connect(2);
        $subscriber->psubscribe($this->prefix . 'events.*');
        self::assertSame([$this->prefix . 'events.*'], $subscriber->patterns());
        self::assertSame(1, $publisher->publish($this->key('events.login'), 'ada'));
        $message = $subscriber->receive(5.0);
        self::assertNotNull($message);
        self::assertSame($this->key('events.login'), $message->channel);
        self::assertSame('ada', $message->payload);
        self::assertSame($this->prefix . 'events.*', $message->pattern);
        $subscriber->punsubscribe();
        self::assertSame([], $subscriber->patterns());
        self::assertFalse($subscriber->isSubscribed());
    }

    #[DataProvider('protocols')]
    public function testReceiveTimesOutWithNullInSyncMode(int $protocol): void
    {
        $subscriber = $this->subscriber($protocol);
        $subscriber->subscribe($this->key('quiet'));
        $started = \hrtime(true);
        self::assertNull($subscriber->receive(0.1));
        self::assertGreaterThanOrEqual(0.09, (\hrtime(true) - $started) / 1e9);
        // The subscriber is still in order afterwards.
        $this->connect(2)->publish($this->key('quiet'), 'late');
        self::assertSame('late', $subscriber->receive(5.0)?->payload);
    }

    #[DataProvider('protocols')]
    public function testUnsubscribeEndsIteration(int $protocol): void
    {
        $subscriber = $this->subscriber($protocol);
        $publisher = $this->connect(2);
        $subscriber->subscribe($this->key('a'), $this->key('b'));
        $subscriber->unsubscribe($this->key('a'));
        self::assertSame([$this->key('b')], $subscriber->channels());
        self::assertSame(0, $publisher->publish($this->key('a'), 'nobody'));
        self::assertSame(1, $publisher->publish($this->key('b'), 'stop'));
        $seen = [];
        foreach ($subscriber as $message) {
            $seen[] = $message->payload;
            $subscriber->unsubscribe();
        }
        self::assertSame(['stop'], $seen);
        self::assertSame([], $subscriber->channels());
        $this->expectException(\LogicException::class);
        $subscriber->receive(0.01);
    }

    #[DataProvider('protocols')]
    public function testSubscribingWhileAnotherCoroutineReceives(int $protocol): void
    {
        run(function () use ($protocol): void {
            $subscriber = $this->subscriber($protocol);
            $publisher = $this->connect(2);
            $subscriber->subscribe($this->key('first'));
            $receiver = go(static function () use ($subscriber): array {
                return [$subscriber->receive(5.0), $subscriber->receive(5.0)];
            });
            sleep(0.02);
            $subscriber->subscribe($this->key('second'));   // sent; the receiver consumes the confirmation
            try {
                $subscriber->receive(0.01);
                self::fail('two receivers at once');
            } catch (ConcurrentUse) {
            }
            // Wait until the server has the second subscription, then publish to both.
            $deadline = \hrtime(true) / 1e9 + 5;
            while ($publisher->command('PUBSUB', 'NUMSUB', $this->key('second'))[1] !== 1) {
                self::assertLessThan($deadline, \hrtime(true) / 1e9);
                sleep(0.005);
            }
            $publisher->publish($this->key('second'), 'to-second');
            $publisher->publish($this->key('first'), 'to-first');
            [$a, $b] = $receiver->join();
            self::assertSame(['to-second', 'to-first'], [$a?->payload, $b?->payload]);
            self::assertSame([$this->key('first'), $this->key('second')], $subscriber->channels());
        });
    }

    public function testAnOuterTimeoutIsNotSwallowed(): void
    {
        run(function (): void {
            $subscriber = $this->subscriber(2);
            $subscriber->subscribe($this->key('quiet'));
            try {
                \Weft\timeout(0.05, static fn () => $subscriber->receive(10.0));
                self::fail('the enclosing timeout must propagate');
            } catch (\Weft\Coroutine\Timeout) {
            }
            self::assertFalse($subscriber->isClosed(), 'an interrupted receive leaves the subscriber usable');
            $this->connect(2)->publish($this->key('quiet'), 'after');
            self::assertSame('after', $subscriber->receive(5.0)?->payload);
        });
    }

    public function testAKilledSubscriberIsConnectionLost(): void
    {
        $subscriber = $this->subscriber(3);
        $subscriber->subscribe($this->key('k'));
        $admin = $this->connect(2);
        self::assertGreaterThanOrEqual(1, $admin->command('CLIENT', 'KILL', 'TYPE', 'pubsub'));
        $this->expectException(ConnectionLost::class);
        $subscriber->receive(5.0);
    }
}
