<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Client\Mysql;

use Weft\Client\Mysql\ConnectionLost;
use Weft\Client\Mysql\Pool;
use Weft\Coroutine\WaitGroup;
use Weft\Pool\PoolOptions;

/**
 * Restarts the test MariaDB (scripts/services.sh restart mariadb) under a pool that coroutines keep
 * querying. A query can only be lost when it was in flight on a connection at the moment the server
 * went down, so at most one per pooled connection; every other call waits for the server to come back.
 */
final class ServerRestartTest extends MysqlTestCase
{
    private const POOL_SIZE = 4;
    private const WORKERS = 10;

    public function testThePoolRidesThroughARestartLosingOnlyQueriesInFlight(): void
    {
        $root = \dirname(__DIR__, 4);
        $pool = new Pool(self::config(), PoolOptions::defaults()->withMax(self::POOL_SIZE)->withBorrowTimeout(90.0));
        $log = \tempnam(\sys_get_temp_dir(), 'weft-restart-');
        $ok = \array_fill(0, self::WORKERS, 0);
        $okAfter = \array_fill(0, self::WORKERS, 0);
        /** @var list<ConnectionLost> $lost */
        $lost = [];
        /** @var list<\Throwable> $unexpected */
        $unexpected = [];
        $exitCode = null;

        \Weft\run(function () use ($pool, $root, $log, &$ok, &$okAfter, &$lost, &$unexpected, &$exitCode): void {
            $phase = 'before';
            $wg = new WaitGroup();
            for ($w = 0; $w < self::WORKERS; $w++) {
                $wg->add();
                \Weft\go(function () use ($w, $pool, $wg, &$phase, &$ok, &$okAfter, &$lost, &$unexpected): void {
                    try {
                        for ($i = 0; $phase !== 'stop'; $i++) {
                            $n = $w * 1_000_000 + $i;
                            $after = $phase === 'after';
                            try {
                                $row = $i % 2 === 0
                                    ? $pool->query('SELECT ? AS n', [$n])->fetch()
                                    : $pool->query("SELECT $n AS n")->fetch();
                                if ($row !== ['n' => $n]) {
                                    throw new \UnexpectedValueException("wrong row for $n: " . \json_encode($row));
                                }
                                $ok[$w]++;
                                if ($after) {
                                    $okAfter[$w]++;
                                }
                            } catch (ConnectionLost $e) {
                                $lost[] = $e;
                            }
                            // Pause now and then, so that idle connections sit in the pool when the server goes.
                            \Weft\sleep($i % 3 === 0 ? 0.003 : 0.0);
                        }
                    } catch (\Throwable $e) {
                        $unexpected[] = $e;
                    } finally {
                        $wg->done();
                    }
                });
            }

            \Weft\sleep(0.5);
            $process = \proc_open(
                ['bash', $root . '/scripts/services.sh', 'restart', 'mariadb'],
                [0 => ['file', '/dev/null', 'r'], 1 => ['file', $log, 'w'], 2 => ['file', $log, 'a']],
                $pipes,
                $root,
            );
            self::assertIsResource($process);
            while (($status = \proc_get_status($process))['running']) {
                \Weft\sleep(0.05);
            }
            $exitCode = $status['exitcode'];
            \proc_close($process);
            $phase = 'after';
            \Weft\sleep(1.0);
            $phase = 'stop';
            $wg->wait(120.0);
        });
        $pool->close();

        $output = (string) \file_get_contents($log);
        @\unlink($log);
        self::assertSame(0, $exitCode, "services.sh restart mariadb failed:\n$output");
        self::assertStringContainsString('mariadb restarted', $output);
        self::assertSame([], \array_map(static fn (\Throwable $e): string => $e::class . ': ' . $e->getMessage(), $unexpected));
        // At most one lost query per pooled connection: the one in flight when the server went down.
        self::assertLessThanOrEqual(self::POOL_SIZE, \count($lost), \implode("\n", \array_map(static fn ($e) => $e->getMessage(), $lost)));
        foreach ($lost as $e) {
            self::assertFalse($e->isSafeToRetry(), 'only in-flight queries may surface: ' . $e->getMessage());
        }
        foreach ($okAfter as $w => $count) {
            self::assertGreaterThan(0, $count, "worker $w made no progress after the restart");
            self::assertGreaterThan($count, $ok[$w], "worker $w made no progress before the restart");
        }
        $stats = $pool->stats();
        self::assertGreaterThan(self::POOL_SIZE, $stats['created'], 'the connections were replaced');
        if (\getenv('WEFT_TEST_VERBOSE')) {
            \fwrite(\STDERR, \json_encode(['lost' => \count($lost), 'ok' => $ok, 'ok_after' => $okAfter, 'stats' => $stats]) . "\n" . $output);
        }
    }
}
