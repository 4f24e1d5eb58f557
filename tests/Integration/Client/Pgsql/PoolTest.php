<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Client\Pgsql;

use PHPUnit\Framework\Attributes\Group;
use Weft\Socket\ConnectException;
use Weft\Client\Pgsql\Connection;
use Weft\Client\Pgsql\ConnectionLost;
use Weft\Client\Pgsql\Pool;
use Weft\Client\Pgsql\QueryError;
use Weft\Pool\PoolOptions;

use function Weft\go;
use function Weft\run;

final class PoolTest extends PgsqlTestCase
{
    private ?Pool $pool = null;

    protected function tearDown(): void
    {
        $this->pool?->close();
        $this->pool = null;
        parent::tearDown();
    }

    private function pool(?PoolOptions $options = null): Pool
    {
        return $this->pool = new Pool(self::config(), $options ?? PoolOptions::defaults()->withMax(5));
    }

    public function testSharesConnectionsBetweenCoroutines(): void
    {
        $pool = $this->pool(PoolOptions::defaults()->withMax(3));
        $start = \hrtime(true);
        $pids = run(static function () use ($pool): array {
            $tasks = [];
            for ($i = 0; $i < 6; $i++) {
                $tasks[] = go(static fn () => $pool->query('SELECT pg_sleep(0.2), pg_backend_pid() AS pid')->fetchOne()['pid']);
            }
            return \array_map(static fn ($task) => $task->join(), $tasks);
        });
        $elapsed = (\hrtime(true) - $start) / 1e9;
        self::assertCount(3, \array_unique($pids), 'six queries on three connections');
        self::assertLessThan(1.2, $elapsed, 'two rounds of 0.2 s, not six');
        $stats = $pool->stats();
        self::assertSame([3, 3, 0], [$stats['created'], $stats['idle'], $stats['in_use']]);
    }

    public function testTransactionThroughThePool(): void
    {
        $pool = $this->pool();
        $pool->query('CREATE TABLE IF NOT EXISTS weft_pool_test (id int PRIMARY KEY)');
        try {
            $pool->query('TRUNCATE weft_pool_test');
            $pool->transaction(static fn (Connection $tx) => $tx->query('INSERT INTO weft_pool_test VALUES (1)'));
            try {
                $pool->transaction(static function (Connection $tx): void {
                    $tx->query('INSERT INTO weft_pool_test VALUES (2)');
                    $tx->query('INSERT INTO weft_pool_test VALUES (1)');
                });
                self::fail('no exception');
            } catch (QueryError $e) {
                self::assertSame('23505', $e->sqlState());
            }
            self::assertSame([1], $pool->query('SELECT id FROM weft_pool_test ORDER BY id')->fetchColumn());
        } finally {
            $pool->query('DROP TABLE weft_pool_test');
        }
    }

    public function testAConnectionLeftInATransactionIsNotPooled(): void
    {
        $pool = $this->pool();
        $pool->use(static function (Connection $connection): void {
            $connection->begin();
            $connection->query('SELECT 1');
        });
        $stats = $pool->stats();
        self::assertSame(0, $stats['idle']);
        self::assertSame(1, $stats['discarded']);
        self::assertFalse($pool->use(static fn (Connection $connection): bool => $connection->inTransaction()));
        self::assertSame(1, $pool->stats()['idle']);
    }

    public function testRecoversFromATerminatedConnection(): void
    {
        $pool = $this->pool();
        $victim = $pool->borrow();
        $pid = $victim->backendPid();
        $pool->release($victim);
        $admin = $this->connect();
        self::assertTrue($admin->query('SELECT pg_terminate_backend($1)', [$pid])->fetchScalar());
        for ($i = 0; $i < 500 && $victim->isConnected(); $i++) {
            \Weft\sleep(0.01);
        }

        // The idle connection is dead: found before sending, discarded, the query runs on a new one.
        $newPid = $pool->query('SELECT pg_backend_pid()')->fetchScalar();
        self::assertNotSame($pid, $newPid);
        $stats = $pool->stats();
        self::assertSame(1, $stats['discarded']);
        self::assertSame(2, $stats['created']);
        self::assertSame(1, $stats['total']);
    }

    public function testAStatementKilledWhileRunningIsNotRepeated(): void
    {
        $pool = $this->pool();
        $admin = $this->connect();
        $runs = 0;
        $error = run(function () use ($pool, $admin, &$runs): ?\Throwable {
            $task = go(static function () use ($pool, &$runs): ?\Throwable {
                try {
                    $pool->use(static function (Connection $connection) use (&$runs): void {
                        $runs++;
                        $connection->query("SELECT pg_sleep(10) /* weft-victim */");
                    });
                    return null;
                } catch (ConnectionLost $e) {
                    return $e;
                }
            });
            for ($i = 0; $i < 300; $i++) {
                $pid = $admin->query(
                    "SELECT pid FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%weft-victim%' AND pid <> pg_backend_pid()",
                )->fetchScalar();
                if ($pid !== null) {
                    $admin->query('SELECT pg_terminate_backend($1)', [$pid]);
                    break;
                }
                \Weft\sleep(0.01);
            }
            return $task->join(5.0);
        });
        self::assertInstanceOf(ConnectionLost::class, $error);
        self::assertSame(1, $runs);
        self::assertSame(1, $pool->stats()['discarded']);
        self::assertSame(1, $pool->query('SELECT 1')->fetchScalar(), 'and the pool goes on');
    }

    public function testUnreachableServerSurfacesAsConnectException(): void
    {
        $this->pool = new Pool(self::config()->withHost('127.0.0.1', 1), PoolOptions::defaults()->withMax(1));
        $this->expectException(ConnectException::class);
        $this->pool->query('SELECT 1');
    }

    #[Group('restart')]
    public function testSurvivesAServerRestartUnderLoad(): void
    {
        $pool = $this->pool(PoolOptions::defaults()->withMax(4)->withBorrowTimeout(10.0));
        $errors = [];
        $afterRestart = run(static function () use ($pool, &$errors): array {
            // Four open connections, all idle when the server goes away.
            $warm = [];
            for ($i = 0; $i < 4; $i++) {
                $warm[] = go(static fn () => $pool->query('SELECT pg_sleep(0.05)'));
            }
            foreach ($warm as $task) {
                $task->join();
            }
            self::assertSame(4, $pool->stats()['idle']);

            $running = true;
            $load = go(static function () use ($pool, &$running, &$errors): void {
                while ($running) {
                    try {
                        $pool->query('SELECT 1');
                    } catch (ConnectionLost | ConnectException $e) {
                        $errors[] = $e::class;
                    }
                    \Weft\sleep(0.02);
                }
            });

            $root = \dirname(__DIR__, 4);
            $process = \proc_open(['bash', $root . '/scripts/services.sh', 'restart', 'postgres'], [
                0 => ['file', '/dev/null', 'r'],
                1 => ['file', '/dev/null', 'w'],
                2 => ['pipe', 'w'],
            ], $pipes);
            self::assertIsResource($process);
            $deadline = \hrtime(true) + 120e9;
            while (($status = \proc_get_status($process))['running']) {
                self::assertLessThan($deadline, \hrtime(true), 'services.sh restart postgres took over 120 s');
                \Weft\sleep(0.05);
            }
            $stderr = \stream_get_contents($pipes[2]);
            \fclose($pipes[2]);
            \proc_close($process);
            self::assertSame(0, $status['exitcode'], "services.sh restart postgres failed: $stderr");

            $running = false;
            $load->join();

            // Every connection opened before the restart is dead; each is found so before sending.
            $results = [];
            $tasks = [];
            for ($i = 0; $i < 8; $i++) {
                $tasks[] = go(static fn () => $pool->query('SELECT $1::int AS i', [$i])->fetchScalar());
            }
            foreach ($tasks as $task) {
                $results[] = $task->join();
            }
            return $results;
        });
        self::assertSame([0, 1, 2, 3, 4, 5, 6, 7], $afterRestart);
        self::assertSame([], \array_diff($errors, [ConnectionLost::class, ConnectException::class]));
        $stats = $pool->stats();
        self::assertGreaterThanOrEqual(4, $stats['discarded'] + $stats['evicted'], 'the four pre-restart connections are gone');
    }
}
