<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Hook;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Coroutine\Channel;
use Weft\Hook\Hooks;
use Weft\Loop\NativeDriver;
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
        if (!Hooks::isSupported() || !\Weft\Loop\DriverFactory::epollAvailable()) {
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
            // What the loop's next wait would watch: idleFor() applies pending changes to the kernel's set.
            $loop = Loop::get();
            \assert($loop instanceof NativeDriver);
            $loop->idleFor();
            $streams = $loop->epoll()->count();
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
        $order = self::whileAChildRuns('usleep(50000); echo "x"; usleep(3000000);', static function (array $pipes, array &$order): string {
            $driver = Loop::get();
            return $driver->onReadable($pipes[1], static function (string $id) use (&$order, $driver): void {
                $order[] = 'pipe';
                $driver->cancel($id);
            });
        });
        self::assertSame(['pipe', 'redis'], $order);
    }

    /** @return iterable<string, array{string}> */
    public static function backends(): iterable
    {
        yield 'epoll: the idle poll' => ['epoll'];
        yield 'select: no idle poll, the hooked call suspends as before' => ['select'];
    }

    #[DataProvider('backends')]
    public function testATimerEndsTheIdlePoll(string $backend): void
    {
        Loop::reset($backend);
        $order = run(static function (): array {
            $order = [];
            go(static function () use (&$order): void {
                \Weft\sleep(0.05);
                $order[] = 'timer';
            });
            self::blockingPop($order);
            return $order;
        });
        self::assertSame(['timer', 'redis'], $order);
    }

    public function testAQueuedWakeUpRunsBeforeTheIdlePoll(): void
    {
        $order = run(static function (): array {
            $order = [];
            $channel = new Channel(1);
            go(static function () use ($channel, &$order): void {
                $channel->receive();
                $order[] = 'woken';
            });
            // Right before the BLPOP, the send queues the other coroutine's wake-up: the loop owes it a
            // turn before any wait.
            self::blockingPop($order, static fn () => $channel->send(1));
            return $order;
        });
        self::assertSame(['woken', 'redis'], $order);
    }

    public function testASignalEndsTheIdlePoll(): void
    {
        if (!\function_exists('pcntl_signal') || !\function_exists('posix_kill')) {
            self::markTestSkipped('needs pcntl and posix');
        }
        $order = self::whileAChildRuns('usleep(50000); posix_kill(' . \getmypid() . ', SIGUSR2); usleep(3000000);', static function (array $pipes, array &$order): string {
            return Loop::get()->onSignal(\SIGUSR2, static function () use (&$order): void {
                $order[] = 'signal';
            });
        });
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

    /**
     * Runs $code in a child PHP process (its stdout a pipe), lets $watch add a loop watcher that records
     * what it sees in $order, and waits in blockingPop() meanwhile: the order in which things happened.
     *
     * @param \Closure(array<int, resource>, list<string>&): string $watch returns the watcher's id
     * @return list<string>
     */
    private static function whileAChildRuns(string $code, \Closure $watch): array
    {
        $child = \proc_open([\PHP_BINARY, '-r', $code], [1 => ['pipe', 'w']], $pipes);
        self::assertIsResource($child);
        try {
            return run(static function () use ($watch, $pipes): array {
                $order = [];
                $watcher = $watch($pipes, $order);
                self::blockingPop($order);
                Loop::get()->cancel($watcher);
                return $order;
            });
        } finally {
            \proc_terminate($child);
            \proc_close($child);
        }
    }

    /**
     * An empty BLPOP of LONG seconds in its own coroutine, waited for: Redis answers only at its end.
     * With nothing else to do, the BLPOP waits in the idle poll. The coroutine gets there the way a
     * request's coroutine does: its first wait goes through the loop (the caller of go() goes on
     * meanwhile), and another coroutine then wakes it through the loop's queue of wake-ups, so after the
     * poll the loop goes straight to its next wait. $before runs right before the BLPOP.
     */
    private static function blockingPop(array &$order, ?\Closure $before = null): void
    {
        $redis = self::redis();
        $gate = new Channel();
        $popper = go(static function () use ($redis, $gate, $before, &$order): void {
            $redis->ping();
            $gate->receive();
            if ($before !== null) {
                $before();
            }
            $popped = $redis->blPop(['weft:idle:none:' . \bin2hex(\random_bytes(6))], self::LONG);
            $order[] = $popped === [] ? 'redis' : 'redis returned ' . \var_export($popped, true);
        });
        go(static function () use ($gate): void {
            \Weft\sleep(0.005);
            $gate->send(true);
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
