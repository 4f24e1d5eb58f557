<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Client\Mysql;

use Weft\Client\Mysql\Connection;
use Weft\Client\Mysql\ConnectionLost;
use Weft\Client\Mysql\Pool;
use Weft\Client\Mysql\QueryError;
use Weft\Coroutine\WaitGroup;
use Weft\Pool\PoolOptions;

final class PoolTest extends MysqlTestCase
{
    public function testFiftyCoroutinesShareFiveConnections(): void
    {
        $pool = new Pool(self::config(), PoolOptions::defaults()->withMax(5));
        $connectionIds = [];
        $checked = 0;
        \Weft\run(function () use ($pool, &$connectionIds, &$checked): void {
            $wg = new WaitGroup();
            for ($c = 0; $c < 50; $c++) {
                $wg->add();
                \Weft\go(function () use ($pool, $c, $wg, &$connectionIds, &$checked): void {
                    try {
                        for ($q = 0; $q < 10; $q++) {
                            $n = $c * 100 + $q;
                            $row = $pool->query('SELECT ? AS n, CONNECTION_ID() AS id, SLEEP(0.001) AS s', [$n])->fetch();
                            self::assertSame($n, $row['n']);
                            $connectionIds[$row['id']] = true;
                            $text = $pool->query("SELECT $n AS n")->fetchColumn();
                            self::assertSame($n, $text);
                            $checked++;
                        }
                    } finally {
                        $wg->done();
                    }
                });
            }
            $wg->wait(60.0);
        });
        self::assertSame(500, $checked);
        self::assertLessThanOrEqual(5, \count($connectionIds));
        $stats = $pool->stats();
        self::assertLessThanOrEqual(5, $stats['created']);
        self::assertSame(0, $stats['in_use']);
        self::assertSame(0, $stats['waiting']);
        self::assertSame(0, $stats['discarded']);
        $pool->close();
    }

    public function testTransactionHoldsOneConnectionAndRollsBackOnException(): void
    {
        $table = $this->table();
        $pool = new Pool(self::url(), PoolOptions::defaults()->withMax(3));
        \Weft\run(function () use ($pool, $table): void {
            $pool->query("CREATE TABLE `$table` (id INT PRIMARY KEY) ENGINE=InnoDB");
            $ids = $pool->transaction(function (Connection $tx) use ($table, $pool): array {
                $ids = [];
                for ($i = 1; $i <= 3; $i++) {
                    $tx->query("INSERT INTO `$table` VALUES (?)", [$i]);
                    $ids[] = $tx->query('SELECT CONNECTION_ID()')->fetchColumn();
                }
                // Not visible from other connections of the pool before the commit.
                self::assertSame(0, \Weft\go(fn () => $pool->query("SELECT COUNT(*) FROM `$table`")->fetchColumn())->join());
                return $ids;
            });
            self::assertCount(1, \array_unique($ids));
            self::assertSame(3, $pool->query("SELECT COUNT(*) FROM `$table`")->fetchColumn());

            try {
                $pool->transaction(function (Connection $tx) use ($table): void {
                    $tx->query("INSERT INTO `$table` VALUES (4)");
                    throw new \RuntimeException('undo');
                });
            } catch (\RuntimeException $e) {
                self::assertSame('undo', $e->getMessage());
            }
            self::assertSame(3, $pool->query("SELECT COUNT(*) FROM `$table`")->fetchColumn());
        });
        $pool->close();
    }

    public function testAConnectionLeftInATransactionIsNotReused(): void
    {
        $pool = new Pool(self::config(), PoolOptions::defaults()->withMax(1));
        $first = $pool->use(function (Connection $db): int {
            $db->begin();
            return $db->id();
        });
        $second = $pool->use(fn (Connection $db): array => [$db->id(), $db->inTransaction()]);
        self::assertNotSame($first, $second[0]);
        self::assertFalse($second[1]);
        self::assertSame(1, $pool->stats()['discarded']);
        $pool->close();
    }

    public function testSyncModeAndServerErrors(): void
    {
        $pool = new Pool(self::config(), PoolOptions::defaults()->withMax(2));
        self::assertSame(5, $pool->execute('SELECT ? + ?', [2, 3])->fetchColumn());
        try {
            $pool->query('SELEC 1');
            self::fail('syntax error not reported');
        } catch (QueryError $e) {
            self::assertSame(1064, $e->getCode());
        }
        self::assertSame(1, $pool->stats()['idle'], 'a server error does not cost the connection');
        self::assertSame(1, $pool->stats()['created']);
        $pool->close();
    }

    public function testConnectionsKilledByTheServerAreReplacedOnTheNextCall(): void
    {
        $pool = new Pool(self::config(), PoolOptions::defaults()->withMax(3)->withCheckAfterIdle(60.0));
        $killer = $this->connect();
        \Weft\run(function () use ($pool, $killer): void {
            // Open three connections at once, then kill them all while they sit idle in the pool.
            $wg = new WaitGroup();
            $ids = [];
            for ($i = 0; $i < 3; $i++) {
                $wg->add();
                \Weft\go(function () use ($pool, $wg, &$ids): void {
                    $ids[] = $pool->query('SELECT CONNECTION_ID(), SLEEP(0.05)')->fetchColumn();
                    $wg->done();
                });
            }
            $wg->wait(10.0);
            self::assertCount(3, \array_unique($ids));
            foreach ($ids as $id) {
                $killer->query("KILL $id");
            }
            foreach ($ids as $id) {
                ConnectionTest::waitUntilGone($killer, $id);
            }
            // Each call finds its idle connection dead before sending, and runs on a new one.
            for ($i = 0; $i < 5; $i++) {
                $id = $pool->query('SELECT CONNECTION_ID()')->fetchColumn();
                self::assertNotContains($id, $ids);
            }
            self::assertGreaterThanOrEqual(1, $pool->stats()['discarded']);
        });
        $pool->close();
    }

    public function testUseDoesNotRunATaskTwiceAfterItsFirstCommand(): void
    {
        $pool = new Pool(self::config(), PoolOptions::defaults()->withMax(2));
        $killer = $this->connect();
        $runs = 0;
        try {
            $pool->use(function (Connection $db) use ($killer, &$runs): void {
                $runs++;
                $db->query('SELECT 1'); // had an effect (in real life: an INSERT)
                $killer->query('KILL ' . $db->id());
                ConnectionTest::waitUntilGone($killer, $db->id());
                $db->query('SELECT 2');
            });
            self::fail('the killed connection was not noticed');
        } catch (ConnectionLost $e) {
            self::assertFalse($e->isSafeToRetry());
            self::assertStringContainsString('not retried', $e->getMessage());
        }
        self::assertSame(1, $runs);
        $pool->close();
    }
}
