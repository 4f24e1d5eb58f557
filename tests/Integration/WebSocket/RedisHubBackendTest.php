<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\WebSocket;

use PHPUnit\Framework\TestCase;
use Weft\Client\Redis\Connection;
use Weft\WebSocket\Hub;
use Weft\WebSocket\RedisBackend;

use function Weft\run;
use function Weft\sleep;

/**
 * RedisBackend against the real Redis (WEFT_TEST_REDIS_URL), two backends in one process standing for
 * two workers: what one publishes reaches the other's delivery once and never its own, binary data and
 * room names survive, foreign payloads on the channel are counted and ignored, presence adds up the
 * workers that are alive and drops the others.
 */
final class RedisHubBackendTest extends TestCase
{
    private string $url;
    private string $prefix;

    protected function setUp(): void
    {
        $url = \getenv('WEFT_TEST_REDIS_URL');
        if (!$url) {
            self::markTestSkipped('WEFT_TEST_REDIS_URL is not set (eval "$(bash scripts/services.sh env)")');
        }
        $this->url = $url;
        $this->prefix = 'weft-test-hub:' . \bin2hex(\random_bytes(6)) . ':';
    }

    protected function tearDown(): void
    {
        if (isset($this->url)) {
            $redis = Connection::connect($this->url);
            $keys = $redis->keys($this->prefix . '*');
            if (\is_array($keys) && $keys !== []) {
                $redis->del(...$keys);
            }
            $redis->close();
        }
    }

    public function testMessagesReachTheOtherWorkerOnceAndNotTheirOwn(): void
    {
        $result = run(function (): array {
            $one = new RedisBackend($this->url, $this->prefix, logger: new \Psr\Log\NullLogger());
            $two = new RedisBackend($this->url, $this->prefix, logger: new \Psr\Log\NullLogger());
            $got = [1 => [], 2 => []];
            $one->attach(static function (string $room, string $data, bool $binary) use (&$got): int {
                $got[1][] = [$room, $data, $binary];
                return 1;
            });
            $two->attach(static function (string $room, string $data, bool $binary) use (&$got): int {
                $got[2][] = [$room, $data, $binary];
                return 1;
            });
            self::waitUntil(static fn (): bool => $one->stats()['subscribed'] && $two->stats()['subscribed']);
            $sent = $one->publish('room é/1', "bin\x00\xff", true, 3);
            $two->publish('r', 'text', false, 0);
            // Someone else's payload on the same channel.
            $raw = Connection::connect($this->url);
            $raw->publish($this->prefix . 'messages', 'not a hub message');
            $raw->close();
            self::waitUntil(static fn (): bool => \count($got[2]) === 1 && \count($got[1]) === 1 && $one->stats()['malformed'] === 1);
            sleep(0.1); // time for a duplicate, were there one
            $stats = [$one->stats(), $two->stats()];
            $one->close();
            $two->close();
            return [$sent, $got, $stats];
        });
        [$sent, $got, [$one, $two]] = $result;
        self::assertTrue($sent->sent);
        self::assertSame(3, $sent->local);
        self::assertSame(2, $sent->receivers, 'both workers are subscribed');
        self::assertSame([['room é/1', "bin\x00\xff", true]], $got[2]);
        self::assertSame([['r', 'text', false]], $got[1]);
        self::assertSame([1, 1, 0, 0], [$one['published'], $one['received'], $one['missed'], $one['unsent']]);
        self::assertSame(1, $two['malformed']);
    }

    public function testPresenceCountsLiveWorkersAndDropsTheDead(): void
    {
        [$before, $after, $left] = run(function (): array {
            $one = new RedisBackend($this->url, $this->prefix, logger: new \Psr\Log\NullLogger());
            $two = new RedisBackend($this->url, $this->prefix, logger: new \Psr\Log\NullLogger());
            $one->attach(static fn (): int => 0);
            $two->attach(static fn (): int => 0);
            $one->membersChanged('lobby', 2);
            $two->membersChanged('lobby', 1);
            $before = $two->presence('lobby', 1);
            // Worker one dies without a word: its alive key expires (here: goes at once).
            $redis = Connection::connect($this->url);
            $redis->del($this->prefix . 'alive:' . $one->stats()['origin']);
            $after = $two->presence('lobby', 1);
            $left = $redis->hgetall($this->prefix . 'room:lobby');
            $redis->close();
            $one->close();
            $two->close();
            return [$before, $after, $left];
        });
        self::assertSame(3, $before);
        self::assertSame(1, $after);
        self::assertCount(1, $left, "the dead worker's count is removed");
    }

    public function testBadArguments(): void
    {
        $hub = new Hub();
        foreach (['', \str_repeat('x', Hub::MAX_ROOM_BYTES + 1)] as $room) {
            try {
                $hub->publish($room, 'x');
                self::fail('a bad room name is refused');
            } catch (\InvalidArgumentException $e) {
                self::assertStringContainsString('room name', $e->getMessage());
            }
        }
        $nobody = $hub->publish('empty', 'x');
        self::assertSame([0, true], [$nobody->local, $nobody->sent]);
        self::assertSame(0, $hub->presence('empty'));
        $this->expectException(\InvalidArgumentException::class);
        new RedisBackend($this->url, $this->prefix, 5.0, 5.0);
    }

    private static function waitUntil(\Closure $condition): void
    {
        $deadline = \microtime(true) + 10;
        while (!$condition()) {
            if (\microtime(true) > $deadline) {
                throw new \RuntimeException('timed out');
            }
            sleep(0.01);
        }
    }
}
