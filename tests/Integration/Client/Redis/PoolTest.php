<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Client\Redis;

use PHPUnit\Framework\Attributes\DataProvider;
use Weft\Client\Redis\Config;
use Weft\Client\Redis\Connection;
use Weft\Client\Redis\ConnectionLost;
use Weft\Socket\ConnectException;
use Weft\Client\Redis\Pool;
use Weft\Client\Redis\RedisError;
use Weft\Coroutine\WaitGroup;
use Weft\Pool\PoolOptions;

use function Weft\go;
use function Weft\run;

final class PoolTest extends RedisTestCase
{
    #[DataProvider('protocols')]
    public function testHelpersRunThroughThePool(int $protocol): void
    {
        $pool = $this->pool($protocol);
        $k = $this->key('k');
        self::assertTrue($pool->set($k, 'v', ex: 60));
        self::assertSame('v', $pool->get($k));
        self::assertSame(1, $pool->hset($k . 'h', 'f', '1'));
        self::assertSame(['f' => '1'], $pool->hgetall($k . 'h'));
        self::assertSame(1, $pool->zadd($k . 'z', ['m' => 2.5]));
        self::assertSame(['m' => 2.5], $pool->zrange($k . 'z', 0, -1, true));
        self::assertSame('PONG', $pool->command('PING'));
        self::assertSame(['v', 1], $pool->pipeline(static function ($p) use ($k): void {
            $p->get($k);
            $p->exists($k);
        }));
        self::assertSame([1, 2], $pool->transaction(static function ($t) use ($k): void {
            $t->incr($k . 'n');
            $t->incr($k . 'n');
        }));
        self::assertSame([$k . 'h'], \iterator_to_array($pool->scanAll($this->prefix . 'k*h'), false));
        try {
            $pool->incr($k);
            self::fail();
        } catch (RedisError $e) {
            self::assertSame('ERR', $e->prefix);
        }
        $stats = $pool->stats();
        self::assertSame(1, $stats['created'], 'one after the other, one connection does it all');
        self::assertSame(0, $stats['discarded'], 'an error reply does not break a connection');
        self::assertSame(1, $stats['idle']);
    }

    public function testFromAUrl(): void
    {
        $pool = $this->pool(Config::fromUrl('redis://weft:weft@' . self::config()->address() . '/9?protocol=3'));
        self::assertSame('weft', $pool->command('ACL', 'WHOAMI'));
    }

    public function testUseKeepsOneConnectionForWatch(): void
    {
        $pool = $this->pool(2);
        $k = $this->key('counter');
        $pool->set($k, '1');
        $result = $pool->use(static function (Connection $r) use ($k): array {
            $r->watch($k);
            $value = (int) $r->get($k);
            return $r->transaction(static function ($t) use ($k, $value): void {
                $t->set($k, (string) ($value * 10));
            });
        });
        self::assertSame([true], $result);
        self::assertSame('10', $pool->get($k));
    }

    public function testAConnectionLeftWatchingIsNotReused(): void
    {
        $pool = $this->pool(2);
        $pool->use(fn (Connection $r) => $r->watch($this->key('w')));
        $stats = $pool->stats();
        self::assertSame(0, $stats['idle'], 'closed instead of handing its WATCH to the next user');
        self::assertSame(1, $stats['discarded']);
    }

    public function testHundredCoroutinesShareFiveConnections(): void
    {
        $pool = $this->pool(2, PoolOptions::defaults()->withMax(5)->withBorrowTimeout(30.0));
        $k = $this->key('shared');
        run(static function () use ($pool, $k): void {
            $wg = new WaitGroup();
            for ($i = 0; $i < 100; $i++) {
                $wg->add();
                go(static function () use ($pool, $k, $i, $wg): void {
                    try {
                        $pool->incr($k);
                        $pool->set("$k:$i", (string) $i);
                        self::assertSame((string) $i, $pool->get("$k:$i"));
                    } finally {
                        $wg->done();
                    }
                });
            }
            $wg->wait();
        });
        self::assertSame('100', $pool->get($k));
        $stats = $pool->stats();
        self::assertLessThanOrEqual(5, $stats['created']);
        self::assertSame(0, $stats['in_use']);
        self::assertSame(0, $stats['waiting']);
    }

    public function testBlockingCommandsHoldTheirOwnConnection(): void
    {
        $pool = $this->pool(2, PoolOptions::defaults()->withMax(2));
        $list = $this->key('jobs');
        $popped = run(static function () use ($pool, $list): array {
            $consumer = go(static fn () => $pool->blpop($list, 10.0));
            \Weft\sleep(0.05);
            self::assertSame(1, $pool->stats()['in_use']);
            $pool->rpush($list, 'job');   // on the second connection
            return $consumer->join();
        });
        self::assertSame([$list, 'job'], $popped);
    }

    public function testConnectFailureRaisesAndFreesTheSlot(): void
    {
        $pool = $this->pool(Config::defaults()->withPort(self::closedPort()), PoolOptions::defaults()->withMax(1));
        for ($i = 0; $i < 2; $i++) {
            try {
                $pool->get('x');
                self::fail();
            } catch (ConnectException $e) {
                self::assertStringContainsString('refused', $e->getMessage());
            }
            self::assertSame(0, $pool->stats()['total']);
        }
    }

    public function testRecoversFromAKilledConnection(): void
    {
        $pool = $this->pool(2, PoolOptions::defaults()->withCheckAfterIdle(60.0));
        $admin = $this->connect(2);
        $k = $this->key('k');
        $pool->set($k, 'v');
        $id = $pool->command('CLIENT', 'ID');
        self::assertSame(1, $admin->command('CLIENT', 'KILL', 'ID', $id));

        // The pooled connection is dead; it is found so before the command is sent, discarded, and the
        // command runs again on a fresh connection.
        self::assertSame('v', $pool->get($k));
        self::assertNotSame($id, $pool->command('CLIENT', 'ID'));
        $stats = $pool->stats();
        self::assertSame(1, $stats['discarded']);
        self::assertSame(2, $stats['created']);
        self::assertSame(1, $stats['total']);
    }

    public function testAConnectionKilledMidCommandFailsOnceThenThePoolRecovers(): void
    {
        $pool = $this->pool(2);
        $admin = $this->connect(2);
        $list = $this->key('never');
        run(function () use ($pool, $admin, $list): void {
            $waiting = go(static fn () => $pool->blpop($list, 10.0));
            \Weft\sleep(0.05);
            $victims = \array_filter(
                \explode("\n", (string) $admin->command('CLIENT', 'LIST')),
                static fn (string $line): bool => \str_contains($line, 'cmd=blpop'),
            );
            self::assertCount(1, $victims);
            \preg_match('/^id=(\d+)/', \reset($victims), $m);
            $admin->command('CLIENT', 'KILL', 'ID', $m[1]);
            try {
                $waiting->join();
                self::fail('a command already sent is not retried');
            } catch (ConnectionLost $e) {
                self::assertFalse($e->isSafeToRetry());
            }
        });
        self::assertSame('PONG', $pool->ping());
        self::assertSame(1, $pool->stats()['discarded']);
    }

    public function testHealthCheckDiscardsDeadIdleConnections(): void
    {
        $pool = $this->pool(2, PoolOptions::defaults()->withCheckAfterIdle(0.0));
        $admin = $this->connect(2);
        $id = $pool->command('CLIENT', 'ID');
        $admin->command('CLIENT', 'KILL', 'ID', $id);
        \Weft\sleep(0.01);
        self::assertSame('PONG', $pool->ping());
        self::assertSame(1, $pool->stats()['discarded']);
    }

    public function testCloseRefusesFurtherCommands(): void
    {
        $pool = new Pool(self::config());
        $pool->ping();
        $pool->close();
        self::assertSame(0, $pool->stats()['total']);
        $this->expectException(\Weft\Pool\PoolClosed::class);
        $pool->ping();
    }
}
