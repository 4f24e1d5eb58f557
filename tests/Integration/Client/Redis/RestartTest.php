<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Client\Redis;

use Weft\Client\Redis\ConnectionLost;
use Weft\Socket\ConnectException;
use Weft\Client\Redis\RedisError;
use Weft\Pool\PoolOptions;

use function Weft\go;
use function Weft\run;
use function Weft\sleep;

/** `scripts/services.sh restart redis` under a pool in use. */
final class RestartTest extends RedisTestCase
{
    public function testIdleConnectionsKilledByARestartAreReplacedTransparently(): void
    {
        // No health check: the dead connections are found by the client itself before it sends.
        $pool = $this->pool(2, PoolOptions::defaults()->withMin(3)->withMax(3)->withCheckAfterIdle(60.0));
        self::assertSame('PONG', $pool->ping());
        self::assertSame(3, $pool->stats()['idle']);

        self::restartRedis();

        $k = $this->key('after-restart');
        // Three coroutines at once borrow all three (dead) connections.
        $results = run(function () use ($pool, $k): array {
            $tasks = [];
            for ($i = 0; $i < 3; $i++) {
                $tasks[] = go(fn () => $this->retryWhileLoading(static fn () => $pool->incr($k)));
            }
            return \array_map(static fn ($task) => $task->join(), $tasks);
        });
        \sort($results);
        self::assertSame([1, 2, 3], $results);
        $stats = $pool->stats();
        self::assertSame(3, $stats['discarded'], 'each dead connection was discarded once');
        self::assertSame(3, $stats['total']);
        self::assertSame(6, $stats['created']);
        self::assertSame(4, $pool->incr($k));
    }

    public function testCoroutinesKeepWorkingThroughARestart(): void
    {
        $pool = $this->pool(2, PoolOptions::defaults()->withMax(4)->withBorrowTimeout(10.0));
        $k = $this->key('through-restart');
        $pool->set($k, '0');

        [$before, $after, $failures, $exit] = run(function () use ($pool, $k): array {
            $stop = false;
            $done = 0;
            $failures = [];
            $workers = [];
            for ($w = 0; $w < 3; $w++) {
                $workers[] = go(static function () use ($pool, $k, &$stop, &$done, &$failures): void {
                    while (!$stop) {
                        try {
                            $pool->incr($k);
                            $done++;
                        } catch (ConnectionLost | ConnectException $e) {
                            // Refused while the server is down, or lost with a command in flight.
                            $failures[] = $e->getMessage();
                        } catch (RedisError $e) {
                            if ($e->prefix !== 'LOADING') {
                                throw $e;
                            }
                        }
                        sleep(0.005);
                    }
                });
            }
            sleep(0.1);
            $before = $done;
            $exit = self::restartInBackground();
            $restartedAt = $done;
            $deadline = \hrtime(true) / 1e9 + 10;
            while ($done < $restartedAt + 20 && \hrtime(true) / 1e9 < $deadline) {
                sleep(0.01);
            }
            $stop = true;
            foreach ($workers as $worker) {
                $worker->join();
            }
            return [$before, $done - $restartedAt, $failures, $exit];
        });
        self::assertSame(0, $exit, 'services.sh restart redis');
        self::assertGreaterThan(0, $before);
        self::assertGreaterThanOrEqual(20, $after, 'work resumed after the restart; failures: ' . \implode(' | ', $failures));
        self::assertSame('PONG', $pool->ping());
        self::assertSame(0, $pool->stats()['in_use']);
    }

    private function retryWhileLoading(\Closure $command): mixed
    {
        for ($i = 0; ; $i++) {
            try {
                return $command();
            } catch (RedisError $e) {
                if ($e->prefix !== 'LOADING' || $i > 100) {
                    throw $e;
                }
                sleep(0.05);
            }
        }
    }

    private static function script(): string
    {
        return \dirname(__DIR__, 4) . '/scripts/services.sh';
    }

    private static function restartRedis(): void
    {
        \exec('bash ' . \escapeshellarg(self::script()) . ' restart redis 2>&1', $output, $exit);
        self::assertSame(0, $exit, \implode("\n", $output));
    }

    /** Runs the restart in a child process while the calling coroutine sleeps; returns its exit code. */
    private static function restartInBackground(): int
    {
        $log = \tempnam(\sys_get_temp_dir(), 'weft-restart');
        $process = \proc_open(
            ['bash', self::script(), 'restart', 'redis'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', $log, 'w'], 2 => ['file', $log, 'w']],
            $pipes,
        );
        self::assertIsResource($process);
        $deadline = \hrtime(true) / 1e9 + 60;
        while (($status = \proc_get_status($process))['running']) {
            self::assertLessThan($deadline, \hrtime(true) / 1e9, 'services.sh restart redis hangs');
            sleep(0.02);
        }
        \proc_close($process);
        $output = (string) \file_get_contents($log);
        \unlink($log);
        self::assertSame(0, $status['exitcode'], $output);
        return $status['exitcode'];
    }
}
