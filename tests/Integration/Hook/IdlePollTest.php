<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Hook;

use PHPUnit\Framework\TestCase;
use Weft\Coroutine\Channel;
use Weft\Hook\Hooks;
use Weft\Loop\EpollDriver;
use Weft\Loop\Internal\AbstractDriver;
use Weft\Loop\Internal\Watcher;
use Weft\Loop\Loop;

use function Weft\go;
use function Weft\run;

/**
 * The idle poll (ext/weft_hooks.h, WEFT_WAIT_IDLE): on the epoll loop, a hooked call that would block
 * while the loop has nothing else to do polls its descriptor together with the loop's epoll descriptor
 * in C, without a Fiber switch. These tests hold it to "anything that would end the loop's wait ends
 * this one too": the other coroutines' descriptors, timers, queued wake-ups and signals, each shown by
 * the order of events (a hooked call that kept the worker would finish first, whatever its length),
 * and a timeout keeps its meaning. The peers that answer are real: Redis, and child processes.
 */
final class IdlePollTest extends TestCase
{
    /** How long the hooked call waits: long enough that nothing else could finish after it by chance. */
    private const LONG = 2;

    protected function setUp(): void
    {
        if (!Hooks::isSupported() || !EpollDriver::isSupported()) {
            self::markTestSkipped('the weft extension is not loaded (bash scripts/build-ext.sh)');
        }
        Loop::reset('epoll');
        Hooks::enable(Hooks::KINDS['stream'] | Hooks::KINDS['sleep']);
    }

    protected function tearDown(): void
    {
        Hooks::disable();
        Loop::reset('select');
    }

    public function testALoneQueryWaitsWithoutTheLoopAndAnswersAsUsual(): void
    {
        $result = run(static function (): array {
            $redis = self::redis();
            $key = 'weft:idle:' . \bin2hex(\random_bytes(6));
            $redis->set($key, 'v');
            $got = [];
            for ($i = 0; $i < 50; $i++) {
                $got[] = $redis->get($key);
            }
            $redis->del($key);
            // An empty BLPOP: Redis answers after 1 s, while this coroutine is the loop's only work.
            $start = \hrtime(true);
            $popped = $redis->blPop([$key], 1);
            $seconds = (\hrtime(true) - $start) / 1e9;
            $streams = 0;
            foreach ((new \ReflectionProperty(AbstractDriver::class, 'watchers'))->getValue(Loop::get()) as $watcher) {
                $streams += $watcher->enabled && $watcher->type <= Watcher::WRITABLE ? 1 : 0;
            }
            return ['got' => \array_unique($got), 'popped' => $popped, 'seconds' => $seconds, 'streams' => $streams];
        });
        self::assertSame(['v'], $result['got']);
        self::assertSame([], $result['popped']);
        self::assertGreaterThanOrEqual(0.9, $result['seconds']);
        // The waits were idle polls: no descriptor watcher is left enabled in the loop.
        self::assertSame(0, $result['streams'], 'no descriptor watcher enabled in the loop');
    }

    public function testAnotherCoroutinesDescriptorEndsTheIdlePoll(): void
    {
        // A child process writes to a pipe the loop watches after 50 ms; the hooked call waits 2 s.
        $child = \proc_open([\PHP_BINARY, '-r', 'usleep(50000); echo "x"; usleep(3000000);'], [1 => ['pipe', 'w']], $pipes);
        self::assertIsResource($child);
        try {
            $order = run(function () use ($pipes): array {
                $order = [];
                $driver = Loop::get();
                $watcher = $driver->onReadable($pipes[1], function (string $id) use (&$order, $driver): void {
                    $order[] = 'pipe';
                    $driver->cancel($id);
                });
                $this->blockingPop($order);
                $driver->cancel($watcher);
                return $order;
            });
        } finally {
            \proc_terminate($child);
            \proc_close($child);
        }
        self::assertSame(['pipe', 'redis'], $order);
    }

    public function testATimerEndsTheIdlePoll(): void
    {
        $order = run(function (): array {
            $order = [];
            go(static function () use (&$order): void {
                \Weft\sleep(0.05);
                $order[] = 'timer';
            });
            $this->blockingPop($order);
            return $order;
        });
        self::assertSame(['timer', 'redis'], $order);
    }

    public function testAQueuedWakeUpRunsBeforeTheIdlePoll(): void
    {
        $order = run(function (): array {
            $order = [];
            $channel = new Channel(1);
            go(static function () use ($channel, &$order): void {
                $channel->receive();
                $order[] = 'woken';
            });
            // The push queues the other coroutine's wake-up: the loop owes it a turn before any wait.
            $channel->send(1);
            $this->blockingPop($order);
            return $order;
        });
        self::assertSame(['woken', 'redis'], $order);
    }

    public function testASignalEndsTheIdlePoll(): void
    {
        if (!\function_exists('pcntl_signal') || !\function_exists('posix_kill')) {
            self::markTestSkipped('needs pcntl and posix');
        }
        $child = \proc_open([\PHP_BINARY, '-r', 'usleep(50000); posix_kill(' . \getmypid() . ', SIGUSR2); usleep(3000000);'], [], $pipes);
        self::assertIsResource($child);
        try {
            $order = run(function (): array {
                $order = [];
                $driver = Loop::get();
                $watcher = $driver->onSignal(\SIGUSR2, static function () use (&$order): void {
                    $order[] = 'signal';
                });
                $this->blockingPop($order);
                $driver->cancel($watcher);
                return $order;
            });
        } finally {
            \proc_terminate($child);
            \proc_close($child);
        }
        self::assertSame(['signal', 'redis'], $order);
    }

    public function testAStreamTimeoutKeepsItsMeaning(): void
    {
        $server = \stream_socket_server('tcp://127.0.0.1:0');
        $result = run(static function () use ($server): array {
            $client = \stream_socket_client('tcp://' . \stream_socket_get_name($server, false), $errno, $error, 5);
            $peer = \stream_socket_accept($server, 5);
            \stream_set_timeout($client, 0, 200_000);
            $start = \hrtime(true);
            $data = \fread($client, 10);
            $seconds = (\hrtime(true) - $start) / 1e9;
            $timedOut = \stream_get_meta_data($client)['timed_out'];
            \fwrite($peer, 'late');
            $after = \fread($client, 10);
            \fclose($client);
            \fclose($peer);
            return [$data, $seconds, $timedOut, $after];
        });
        \fclose($server);
        [$data, $seconds, $timedOut, $after] = $result;
        self::assertSame('', $data);
        self::assertTrue($timedOut);
        self::assertGreaterThanOrEqual(0.19, $seconds);
        self::assertLessThan(self::LONG, $seconds);
        self::assertSame('late', $after);
    }

    public function testOnTheSelectLoopHookedCallsStillSuspend(): void
    {
        Loop::reset('select');
        $order = run(function (): array {
            $order = [];
            go(static function () use (&$order): void {
                \Weft\sleep(0.05);
                $order[] = 'timer';
            });
            $this->blockingPop($order);
            return $order;
        });
        self::assertSame(['timer', 'redis'], $order);
    }

    /** An empty BLPOP of LONG seconds in its own coroutine, waited for: Redis answers only at its end. */
    private function blockingPop(array &$order): void
    {
        $redis = self::redis();
        $popper = go(static function () use ($redis, &$order): void {
            $popped = $redis->blPop(['weft:idle:none:' . \bin2hex(\random_bytes(6))], self::LONG);
            $order[] = $popped === [] ? 'redis' : 'redis returned ' . \var_export($popped, true);
        });
        $popper->join();
    }

    private static function redis(): \Redis
    {
        $url = \parse_url(\getenv('WEFT_TEST_REDIS_URL') ?: 'redis://127.0.0.1:16379');
        $redis = new \Redis();
        $redis->connect($url['host'] ?? '127.0.0.1', (int) ($url['port'] ?? 6379), 5.0);
        return $redis;
    }
}
