<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Client\Pgsql;

use PHPUnit\Framework\Attributes\DataProvider;
use Weft\Socket\ConnectException;
use Weft\Client\Pgsql\ConnectionLost;
use Weft\Socket\ConnectTimeout;
use Weft\Client\Pgsql\QueryError;
use Weft\Coroutine\ConcurrentUse;
use Weft\Coroutine\Timeout;
use Weft\Socket\Listener;

use function Weft\go;
use function Weft\run;

final class ConnectionTest extends PgsqlTestCase
{
    /** @return iterable<string, array{bool}> */
    public static function modes(): iterable
    {
        yield 'sync' => [false];
        yield 'coroutine' => [true];
    }

    /** Runs $task as plain blocking code, or inside a coroutine: the client must behave the same. */
    private static function inMode(bool $coroutine, \Closure $task): mixed
    {
        return $coroutine ? run($task) : $task();
    }

    #[DataProvider('modes')]
    public function testTypesComeBackConverted(bool $coroutine): void
    {
        $row = self::inMode($coroutine, fn () => $this->connect()->query(
            "SELECT 1::int2 AS a, 2147483647::int4 AS b, 9223372036854775807::int8 AS c, 1.5::float4 AS d,
                    0.1::float8 AS e, 'NaN'::float8 AS nan, 'Infinity'::float8 AS inf, 12345678901234567890.123::numeric AS f,
                    true AS g, false AS h, NULL::int AS i, NULL::text AS j, '{\"k\": [1, 2]}'::json AS k,
                    '{\"l\": null}'::jsonb AS l, 'text'::text AS m, '2024-02-29'::date AS n, '{1,2}'::int[] AS o,
                    42::oid AS p",
        )->fetchOne());

        self::assertSame(1, $row['a']);
        self::assertSame(2147483647, $row['b']);
        self::assertSame(\PHP_INT_MAX, $row['c']);
        self::assertSame(1.5, $row['d']);
        self::assertSame(0.1, $row['e']);
        self::assertNan($row['nan']);
        self::assertSame(\INF, $row['inf']);
        self::assertSame('12345678901234567890.123', $row['f'], 'numeric keeps its precision as a string');
        self::assertTrue($row['g']);
        self::assertFalse($row['h']);
        self::assertNull($row['i']);
        self::assertNull($row['j']);
        self::assertSame('{"k": [1, 2]}', $row['k'], 'json stays text by default');
        self::assertSame('{"l": null}', $row['l']);
        self::assertSame('text', $row['m']);
        self::assertSame('2024-02-29', $row['n']);
        self::assertSame('{1,2}', $row['o']);
        self::assertSame(42, $row['p']);
    }

    public function testJsonIsDecodedWhenAsked(): void
    {
        $connection = $this->connect(self::config()->withDecodeJson());
        $row = $connection->query("SELECT '{\"k\": [1, 2]}'::json AS k, '[true]'::jsonb AS l, NULL::jsonb AS m")->fetchOne();
        self::assertSame(['k' => ['k' => [1, 2]], 'l' => [true], 'm' => null], $row);
    }

    #[DataProvider('modes')]
    public function testParametersOfEveryType(bool $coroutine): void
    {
        $at = new \DateTimeImmutable('2024-01-02 03:04:05.123456', new \DateTimeZone('+02:00'));
        $row = self::inMode($coroutine, fn () => $this->connect()->query(
            'SELECT $1::int8 AS i, $2::float8 AS f, $3::text AS s, $4::bool AS t, $5::bool AS b, $6::int AS n,
                    $7::timestamptz = \'2024-01-02 01:04:05.123456+00\' AS at, $8::float8 AS tiny, $9::text AS quote,
                    $10::float8 AS minf',
            [\PHP_INT_MIN, 0.1 + 0.2, "it's \\ ünïcode", true, false, null, $at, 1.0e-300, "'; DROP TABLE x; --", -\INF],
        )->fetchOne());

        self::assertSame(\PHP_INT_MIN, $row['i']);
        self::assertSame(0.1 + 0.2, $row['f'], 'floats travel in their shortest exact form');
        self::assertSame("it's \\ ünïcode", $row['s']);
        self::assertTrue($row['t']);
        self::assertFalse($row['b']);
        self::assertNull($row['n']);
        self::assertTrue($row['at']);
        self::assertSame(1.0e-300, $row['tiny']);
        self::assertSame("'; DROP TABLE x; --", $row['quote']);
        self::assertSame(-\INF, $row['minf']);
    }

    public function testUnsupportedParameterTypesAreRefusedBeforeAnythingIsSent(): void
    {
        $connection = $this->connect();
        try {
            $connection->query('SELECT $1', [[1, 2]]);
            self::fail('no exception');
        } catch (\InvalidArgumentException $e) {
            self::assertStringContainsString('$1 is a array', $e->getMessage());
        }
        self::assertSame(1, $connection->query('SELECT 1')->fetchScalar());
    }

    public function testResultAccessors(): void
    {
        $connection = $this->connect();
        $result = $connection->query('SELECT g AS n, g * 2 AS double FROM generate_series(1, 3) g');
        self::assertCount(3, $result);
        self::assertSame(['n', 'double'], $result->fields());
        self::assertSame([['n' => 1, 'double' => 2], ['n' => 2, 'double' => 4], ['n' => 3, 'double' => 6]], $result->fetchAll());
        self::assertSame(['n' => 1, 'double' => 2], $result->fetchOne());
        self::assertSame([2, 4, 6], $result->fetchColumn(1));
        self::assertSame([1, 2, 3], $result->fetchColumn('n'));
        self::assertSame(1, $result->fetchScalar());
        self::assertSame('SELECT 3', $result->command());
        $seen = [];
        foreach ($result as $i => $row) {
            $seen[$i] = $row['n'];
        }
        self::assertSame([1, 2, 3], $seen);

        $empty = $connection->query('SELECT 1 AS x WHERE false');
        self::assertSame([], $empty->fetchAll());
        self::assertNull($empty->fetchOne());
        self::assertNull($empty->fetchScalar());
        self::assertSame([], $empty->fetchColumn('x'));
        self::assertCount(0, $empty);

        $this->expectException(\OutOfRangeException::class);
        $result->fetchColumn('nope');
    }

    public function testAffectedRowsAndSeveralStatementsWithoutParameters(): void
    {
        $connection = $this->connect();
        $this->tempTable($connection);
        $result = $connection->query("INSERT INTO users (email) VALUES ('a'), ('b'), ('c')");
        self::assertSame(3, $result->affectedRows());
        self::assertSame('INSERT 0 3', $result->command());
        self::assertSame(2, $connection->query('UPDATE users SET score = $1 WHERE email <> $2', [7, 'a'])->affectedRows());
        $last = $connection->query("DELETE FROM users WHERE email = 'a'; SELECT count(*) FROM users");
        self::assertSame(2, $last->fetchScalar(), 'the last statement\'s result');
    }

    #[DataProvider('modes')]
    public function testPreparedStatements(bool $coroutine): void
    {
        self::inMode($coroutine, function (): void {
            $connection = $this->connect();
            $this->tempTable($connection);
            $insert = $connection->prepare('INSERT INTO users (email, score) VALUES ($1, $2) RETURNING id');
            self::assertStringStartsWith('weft_', $insert->name());
            $ids = [];
            foreach (['a' => 1, 'b' => 2, 'c' => null] as $email => $score) {
                $ids[] = $insert->execute([$email, $score])->fetchScalar();
            }
            self::assertSame([1, 2, 3], $ids);

            $byEmail = $connection->prepare('user_by_email', 'SELECT id, score FROM users WHERE email = $1');
            self::assertSame('user_by_email', $byEmail->name());
            self::assertSame(['id' => 2, 'score' => 2], $byEmail->execute(['b'])->fetchOne());
            self::assertSame(['id' => 3, 'score' => null], $byEmail->execute(['c'])->fetchOne());
            self::assertNull($byEmail->execute(['zz'])->fetchOne());

            $byEmail->close();
            try {
                $connection->query("EXECUTE user_by_email('a')");
                self::fail('the statement was not deallocated');
            } catch (QueryError $e) {
                self::assertSame('26000', $e->sqlState(), 'invalid_sql_statement_name');
            }
            // The name is free again.
            self::assertSame(1, $connection->prepare('user_by_email', 'SELECT 1')->execute()->fetchScalar());
        });
    }

    public function testPrepareErrors(): void
    {
        $connection = $this->connect();
        try {
            $connection->prepare('SELEC $1');
            self::fail('no exception');
        } catch (QueryError $e) {
            self::assertSame('42601', $e->sqlState());
        }
        $statement = $connection->prepare('s', 'SELECT $1::int');
        try {
            $statement->execute(['not a number']);
            self::fail('no exception');
        } catch (QueryError $e) {
            self::assertSame('22P02', $e->sqlState(), 'invalid_text_representation');
        }
        self::assertSame(5, $statement->execute([5])->fetchScalar());
    }

    #[DataProvider('modes')]
    public function testTransactionsCommitAndRollBack(bool $coroutine): void
    {
        self::inMode($coroutine, function (): void {
            $connection = $this->connect();
            $this->tempTable($connection);
            self::assertFalse($connection->inTransaction());

            $connection->begin();
            self::assertTrue($connection->inTransaction());
            $connection->query('INSERT INTO users (email) VALUES ($1)', ['kept']);
            $connection->commit();
            self::assertFalse($connection->inTransaction());

            $connection->begin();
            $connection->query('INSERT INTO users (email) VALUES ($1)', ['dropped']);
            $connection->rollback();
            self::assertFalse($connection->inTransaction());

            $id = $connection->transaction(static function ($tx): int {
                self::assertTrue($tx->inTransaction());
                return $tx->query('INSERT INTO users (email) VALUES ($1) RETURNING id', ['closure'])->fetchScalar();
            });
            self::assertIsInt($id);

            try {
                $connection->transaction(static function ($tx): void {
                    $tx->query('INSERT INTO users (email) VALUES ($1)', ['also dropped']);
                    throw new \DomainException('changed my mind');
                });
                self::fail('no exception');
            } catch (\DomainException $e) {
                self::assertSame('changed my mind', $e->getMessage());
            }
            self::assertFalse($connection->inTransaction());

            // A failed statement aborts the transaction; transaction() rolls it back.
            try {
                $connection->transaction(static function ($tx): void {
                    $tx->query('INSERT INTO users (email) VALUES ($1)', ['dup']);
                    $tx->query('INSERT INTO users (email) VALUES ($1)', ['dup']);
                });
                self::fail('no exception');
            } catch (QueryError $e) {
                self::assertSame('23505', $e->sqlState());
            }
            self::assertFalse($connection->inTransaction());

            self::assertSame(['kept', 'closure'], $connection->query('SELECT email FROM users ORDER BY id')->fetchColumn());
        });
    }

    public function testSyntaxErrorCarriesSqlStateAndLeavesTheConnectionUsable(): void
    {
        $connection = $this->connect();
        try {
            $connection->query('SELEC 1');
            self::fail('no exception');
        } catch (QueryError $e) {
            self::assertSame('42601', $e->sqlState());
            self::assertStringContainsString('syntax error at or near "SELEC"', $e->getMessage());
            self::assertSame('SELEC 1', $e->query());
        }
        self::assertSame(1, $connection->query('SELECT 1')->fetchScalar());
    }

    public function testUniqueViolationCarriesSqlStateAndDetail(): void
    {
        $connection = $this->connect();
        $this->tempTable($connection);
        $connection->query('INSERT INTO users (email) VALUES ($1)', ['a@example.com']);
        try {
            $connection->query('INSERT INTO users (email) VALUES ($1)', ['a@example.com']);
            self::fail('no exception');
        } catch (QueryError $e) {
            self::assertSame('23505', $e->sqlState());
            self::assertStringContainsString('duplicate key value violates unique constraint', $e->getMessage());
            self::assertSame('Key (email)=(a@example.com) already exists.', $e->detail());
        }
        self::assertFalse($connection->inTransaction());
        self::assertSame(1, $connection->query('SELECT count(*) FROM users')->fetchScalar());
    }

    #[DataProvider('modes')]
    public function testWrongPassword(bool $coroutine): void
    {
        try {
            self::inMode($coroutine, fn () => $this->connect(self::config()->withUser(self::config()->user, 'wrong')));
            self::fail('no exception');
        } catch (ConnectException $e) {
            self::assertStringContainsString('password authentication failed for user', $e->getMessage());
            self::assertStringContainsString(self::config()->address(), $e->getMessage());
        }
    }

    #[DataProvider('modes')]
    public function testConnectionRefused(bool $coroutine): void
    {
        // A port that was free a moment ago: bind, note it, close.
        $listener = Listener::listen('127.0.0.1:0');
        $port = $listener->port();
        $listener->close();
        try {
            self::inMode($coroutine, fn () => $this->connect(self::config()->withHost('127.0.0.1', $port)));
            self::fail('no exception');
        } catch (ConnectException $e) {
            self::assertNotInstanceOf(ConnectTimeout::class, $e);
            self::assertStringContainsString('Connection refused', $e->getMessage());
        }
    }

    #[DataProvider('modes')]
    public function testConnectTimeoutIsEnforcedByWeft(bool $coroutine): void
    {
        // A listener that never accepts: the kernel completes the TCP handshake (backlog), then nothing
        // ever answers libpq's first message.
        $listener = Listener::listen('127.0.0.1:0');
        $config = self::config()->withHost('127.0.0.1', $listener->port())->withConnectTimeout(0.3)->withOption('sslmode', 'disable');
        $start = \hrtime(true);
        try {
            self::inMode($coroutine, fn () => $this->connect($config));
            self::fail('no exception');
        } catch (ConnectTimeout $e) {
            self::assertStringContainsString('timed out after 0.3 s', $e->getMessage());
        } finally {
            $listener->close();
        }
        $elapsed = (\hrtime(true) - $start) / 1e9;
        self::assertGreaterThanOrEqual(0.29, $elapsed);
        self::assertLessThan(2.0, $elapsed, 'not libpq\'s own (whole-second) timeout');
    }

    public function testQueriesSuspendOnlyTheirCoroutine(): void
    {
        $connections = [];
        for ($i = 0; $i < 5; $i++) {
            $connections[] = $this->connect();
        }
        $ticks = 0;
        $start = \hrtime(true);
        $results = run(static function () use ($connections, &$ticks): array {
            $ticker = go(static function () use (&$ticks): void {
                for ($i = 0; $i < 10; $i++) {
                    \Weft\sleep(0.02);
                    $ticks++;
                }
            });
            $tasks = [];
            foreach ($connections as $i => $connection) {
                $tasks[] = go(static fn () => $connection->query('SELECT pg_sleep(0.5), $1::int AS i', [$i])->fetchOne()['i']);
            }
            $results = \array_map(static fn ($task) => $task->join(), $tasks);
            $ticker->join();
            return $results;
        });
        $elapsed = (\hrtime(true) - $start) / 1e9;
        self::assertSame([0, 1, 2, 3, 4], $results);
        self::assertLessThan(2.5, $elapsed, '5 x pg_sleep(0.5) overlapped (sequential would take 2.5 s)');
        self::assertSame(10, $ticks, 'another coroutine ran while the queries waited');
    }

    public function testConcurrentUseOfOneConnectionIsAnError(): void
    {
        $connection = $this->connect();
        $error = run(static function () use ($connection): ?\Throwable {
            $first = go(static fn () => $connection->query('SELECT pg_sleep(0.2), 1 AS one')->fetchOne()['one']);
            $second = go(static function () use ($connection): ?\Throwable {
                try {
                    $connection->query('SELECT 2');
                    return null;
                } catch (ConcurrentUse $e) {
                    return $e;
                }
            });
            self::assertSame(1, $first->join(), 'the first user is not disturbed');
            return $second->join();
        });
        self::assertInstanceOf(ConcurrentUse::class, $error);
        self::assertStringContainsString('one coroutine at a time', $error->getMessage());
        self::assertSame(3, $connection->query('SELECT 3')->fetchScalar());
    }

    public function testAnotherCoroutineCannotStepIntoAnOpenTransaction(): void
    {
        $connection = $this->connect();
        $error = run(static function () use ($connection): ?\Throwable {
            $owner = go(static function () use ($connection): void {
                $connection->transaction(static function ($tx): void {
                    $tx->query('SELECT 1');
                    \Weft\sleep(0.1);
                    $tx->query('SELECT 2');
                });
            });
            $intruder = go(static function () use ($connection): ?\Throwable {
                \Weft\sleep(0.05);
                try {
                    $connection->query('SELECT 3');
                    return null;
                } catch (ConcurrentUse $e) {
                    return $e;
                }
            });
            $owner->join();
            return $intruder->join();
        });
        self::assertInstanceOf(ConcurrentUse::class, $error);
        self::assertStringContainsString('is in use by the transaction of coroutine #', $error->getMessage());
        self::assertFalse($connection->inTransaction());
    }

    public function testTerminatedWhileIdleIsFoundBeforeSending(): void
    {
        $victim = $this->connect();
        $admin = $this->connect();
        self::assertTrue($victim->isConnected());
        self::assertTrue($admin->query('SELECT pg_terminate_backend($1)', [$victim->backendPid()])->fetchScalar());
        self::waitUntilDisconnected($victim);
        try {
            $victim->query('SELECT 1');
            self::fail('no exception');
        } catch (ConnectionLost $e) {
            self::assertTrue($e->isSafeToRetry(), 'nothing was sent');
            self::assertStringContainsString('server closed the connection', $e->getMessage());
            self::assertInstanceOf(\Weft\Pool\BrokenConnection::class, $e);
        }
        self::assertTrue($victim->isClosed());
        self::assertFalse($victim->ping());
    }

    public function testTerminatedMidStatementIsNotSafeToRetry(): void
    {
        $victim = $this->connect();
        $admin = $this->connect();
        $error = run(static function () use ($victim, $admin): ?\Throwable {
            $query = go(static function () use ($victim): ?\Throwable {
                try {
                    $victim->query('SELECT pg_sleep(10)');
                    return null;
                } catch (ConnectionLost $e) {
                    return $e;
                }
            });
            // Once the statement shows as active, kill its backend.
            for ($i = 0; $i < 200; $i++) {
                $state = $admin->query('SELECT state FROM pg_stat_activity WHERE pid = $1', [$victim->backendPid()])->fetchScalar();
                if ($state === 'active') {
                    break;
                }
                \Weft\sleep(0.01);
            }
            $admin->query('SELECT pg_terminate_backend($1)', [$victim->backendPid()]);
            return $query->join(5.0);
        });
        self::assertInstanceOf(ConnectionLost::class, $error);
        self::assertFalse($error->isSafeToRetry(), 'the statement may have run');
        self::assertStringContainsString('terminating connection due to administrator command', $error->getMessage());
    }

    public function testLostInsideATransactionIsNotSafeToRetry(): void
    {
        $victim = $this->connect();
        $admin = $this->connect();
        $victim->begin();
        $admin->query('SELECT pg_terminate_backend($1)', [$victim->backendPid()]);
        self::waitUntilDisconnected($victim);
        try {
            $victim->query('SELECT 1');
            self::fail('no exception');
        } catch (ConnectionLost $e) {
            self::assertFalse($e->isSafeToRetry());
        }
    }

    public function testAnInterruptedStatementClosesTheConnection(): void
    {
        $connection = $this->connect();
        try {
            run(static fn () => \Weft\timeout(0.2, static fn () => $connection->query('SELECT pg_sleep(5)')));
            self::fail('no exception');
        } catch (Timeout) {
        }
        self::assertTrue($connection->isClosed(), 'its protocol state is unknown');
        try {
            $connection->query('SELECT 1');
            self::fail('no exception');
        } catch (ConnectionLost $e) {
            self::assertTrue($e->isSafeToRetry());
            self::assertStringContainsString('interrupted', $e->getMessage());
        }
    }

    public function testLargeParametersRoundTrip(): void
    {
        $connection = $this->connect();
        $big = \str_repeat('0123456789abcdef', 1 << 18); // 4 MiB, more than a socket buffer
        $row = run(static fn () => $connection->query('SELECT length($1) AS n, md5($1) AS h', [$big])->fetchOne());
        self::assertSame(['n' => \strlen($big), 'h' => \md5($big)], $row);
    }

    public function testCloseIsIdempotent(): void
    {
        $connection = $this->connect();
        self::assertTrue($connection->ping());
        $connection->close();
        $connection->close();
        self::assertTrue($connection->isClosed());
        self::assertFalse($connection->inTransaction());
        $this->expectException(ConnectionLost::class);
        $connection->query('SELECT 1');
    }

    /** Until the victim's socket shows the server's goodbye (the backend leaves pg_stat_activity a bit earlier). */
    private static function waitUntilDisconnected(\Weft\Client\Pgsql\Connection $victim): void
    {
        for ($i = 0; $i < 500 && $victim->isConnected(); $i++) {
            \Weft\sleep(0.01);
        }
        self::assertFalse($victim->isConnected(), 'the server did not close the connection within 5 s');
    }
}
