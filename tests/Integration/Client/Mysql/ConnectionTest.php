<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Client\Mysql;

use PHPUnit\Framework\Attributes\DataProvider;
use Weft\Client\Mysql\AuthenticationFailed;
use Weft\Client\Mysql\Connection;
use Weft\Client\Mysql\ConnectionLost;
use Weft\Client\Mysql\QueryError;
use Weft\Coroutine\ConcurrentUse;
use Weft\Socket\ConnectException;
use Weft\Socket\ConnectTimeout;
use Weft\Socket\Listener;

final class ConnectionTest extends MysqlTestCase
{
    #[DataProvider('modes')]
    public function testConnectsAndKnowsItsServer(string $mode): void
    {
        self::inMode($mode, function (): void {
            $db = $this->connect();
            self::assertTrue($db->isUsable());
            self::assertTrue($db->isMariaDb());
            self::assertStringContainsString('MariaDB', $db->serverVersion());
            self::assertSame($db->id(), $db->query('SELECT CONNECTION_ID() AS id')->fetchColumn());
            self::assertSame('weft', $db->query('SELECT DATABASE()')->fetchColumn());
            self::assertSame('utf8mb4', $db->query('SELECT @@character_set_client')->fetchColumn());
            self::assertTrue($db->ping());
        });
    }

    #[DataProvider('modes')]
    public function testWrongPasswordIsAuthenticationFailedWithTheServerCode(string $mode): void
    {
        self::inMode($mode, function (): void {
            try {
                Connection::connect(self::config()->withPassword('not-the-password'));
                self::fail('connected with a wrong password');
            } catch (AuthenticationFailed $e) {
                self::assertSame(1045, $e->getCode());
                self::assertSame('28000', $e->sqlState());
                self::assertStringContainsString('Access denied for user', $e->getMessage());
                self::assertStringContainsString('Access denied for user', $e->serverMessage());
            }
        });
    }

    public function testUnknownDatabaseIsAQueryError(): void
    {
        try {
            Connection::connect(self::config()->withDatabase('weft_no_such_database'));
            self::fail('connected to a database that does not exist');
        } catch (QueryError $e) {
            self::assertNotInstanceOf(AuthenticationFailed::class, $e);
            self::assertSame(1049, $e->getCode());
            self::assertSame('42000', $e->sqlState());
            self::assertStringContainsString('weft_no_such_database', $e->getMessage());
        }
    }

    #[DataProvider('modes')]
    public function testConnectionRefused(string $mode): void
    {
        $listener = Listener::listen('127.0.0.1:0');
        $port = $listener->port();
        $listener->close();
        self::inMode($mode, function () use ($port): void {
            try {
                Connection::connect(self::config()->withHost('127.0.0.1', $port));
                self::fail('connected to a closed port');
            } catch (ConnectException $e) {
                self::assertSame(111, $e->getCode());
                self::assertStringContainsString('ECONNREFUSED', $e->getMessage());
            }
        });
    }

    #[DataProvider('modes')]
    public function testConnectTimeoutWhenTheServerNeverSpeaks(string $mode): void
    {
        // The kernel completes the TCP handshake for the backlog, but nobody ever sends a greeting.
        $listener = Listener::listen('127.0.0.1:0');
        try {
            self::inMode($mode, function () use ($listener): void {
                $start = \hrtime(true);
                try {
                    Connection::connect(self::config()->withHost('127.0.0.1', $listener->port())->withConnectTimeout(0.3));
                    self::fail('connected to a server that never answers');
                } catch (ConnectTimeout $e) {
                    self::assertSame(110, $e->getCode());
                    self::assertStringContainsString('timed out', $e->getMessage());
                }
                $elapsed = (\hrtime(true) - $start) / 1e9;
                self::assertGreaterThanOrEqual(0.25, $elapsed);
                self::assertLessThan(5.0, $elapsed);
            });
        } finally {
            $listener->close();
        }
    }

    #[DataProvider('modes')]
    public function testTextQueryConvertsTypes(string $mode): void
    {
        self::inMode($mode, function (): void {
            $db = $this->connect();
            $row = $db->query(
                "SELECT 1 AS i, -5 AS neg, 'text' AS s, NULL AS n, 1.50 AS dec_literal, CAST(2.5 AS DOUBLE) AS d,
                        CAST(18446744073709551615 AS UNSIGNED) AS big_unsigned, CAST(9223372036854775807 AS SIGNED) AS big,
                        DATE('2024-02-29') AS dt, CAST('2024-02-29 10:11:12.345' AS DATETIME(3)) AS dtm,
                        CAST('-12:30:00' AS TIME) AS tm, 'héllo 🙂' AS utf8",
            )->fetch();
            self::assertSame([
                'i' => 1, 'neg' => -5, 's' => 'text', 'n' => null, 'dec_literal' => '1.50', 'd' => 2.5,
                'big_unsigned' => '18446744073709551615', 'big' => \PHP_INT_MAX,
                'dt' => '2024-02-29', 'dtm' => '2024-02-29 10:11:12.345', 'tm' => '-12:30:00', 'utf8' => 'héllo 🙂',
            ], $row);
        });
    }

    /** Every common column type, text and binary protocol, value for value against PDO (mysqlnd). */
    public function testValuesMatchPdoInBothProtocols(): void
    {
        $table = $this->table();
        $db = $this->connect();
        $db->query("CREATE TABLE `$table` (
            ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED, mi MEDIUMINT, miu MEDIUMINT UNSIGNED,
            i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED, f FLOAT, f2 FLOAT(7,3), d DOUBLE, dec1 DECIMAL(10,3),
            y YEAR, dt DATE, dtm DATETIME, dtm3 DATETIME(3), dtm6 DATETIME(6), ts TIMESTAMP NULL, tm TIME, tm2 TIME(2),
            bt BIT(10), bt64 BIT(64), ch CHAR(3), vc VARCHAR(10), bn BINARY(3), vb VARBINARY(10), tx TEXT, bl BLOB,
            js JSON, en ENUM('a','b'), st SET('x','y'), nul INT)");
        $db->query("INSERT INTO `$table` VALUES
            (-128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615,
             1.1, 1234.567, 3.141592653589793, -1234567.891, 2024, '2024-02-29', '2024-02-29 23:59:58', '2024-02-29 23:59:58.123',
             '2024-02-29 23:59:58.123456', '2024-01-01 00:00:01', '-838:59:59', '12:00:00.5', b'1111111111',
             b'1111111111111111111111111111111111111111111111111111111111111111', 'ab', 'héllo', 'a\\0', 0x00FF, 'text',
             0xDEADBEEF, '{\"a\": 1}', 'b', 'x,y', NULL),
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00',
             '0000-00-00 00:00:00', NULL, '00:00:00', '00:00:00', b'0', b'0', '', '', '', '', '', '', '[]', 'a', '', NULL),
            (127, 1, 1, 1, 1, 1, 1, 1, 9223372036854775807, 9223372036854775807, -0.5, -1.5, -2.25e-300, 0.001, 1901,
             '1000-01-01', '9999-12-31 23:59:59', '1000-01-01 00:00:00.001', '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07',
             '838:59:59', '-00:00:00.01', b'1', b'1000000000000000000000000000000000000000000000000000000000000000',
             'abc', '', 'xyz', '', REPEAT('t', 300), REPEAT('b', 60000), '{}', NULL, 'y', 0)");

        $pdo = new \PDO('mysql:host=' . self::config()->host . ';port=' . self::config()->port . ';dbname=weft;charset=utf8mb4', self::config()->user, self::config()->password);
        $pdoText = $pdo->query("SELECT * FROM `$table`")->fetchAll(\PDO::FETCH_ASSOC);
        $pdo->setAttribute(\PDO::ATTR_EMULATE_PREPARES, false);
        $statement = $pdo->prepare("SELECT * FROM `$table` WHERE 1 = ?");
        $statement->execute([1]);
        $pdoBinary = $statement->fetchAll(\PDO::FETCH_ASSOC);

        self::assertSame($pdoText, $db->query("SELECT * FROM `$table`")->fetchAll(), 'text protocol');
        self::assertSame($pdoBinary, $db->query("SELECT * FROM `$table` WHERE 1 = ?", [1])->fetchAll(), 'binary protocol');
        self::assertSame($pdoText, $pdoBinary, 'PDO itself gives the same values in both protocols');
        self::assertSame(1023, $pdoText[0]['bt']);
        self::assertSame('18446744073709551615', $pdoText[0]['bt64']);
    }

    #[DataProvider('modes')]
    public function testPreparedStatementsBindEveryParameterType(string $mode): void
    {
        $table = $this->table();
        self::inMode($mode, function () use ($table): void {
            $db = $this->connect();
            $db->query("CREATE TABLE `$table` (id INT AUTO_INCREMENT PRIMARY KEY, i BIGINT, f DOUBLE, s VARCHAR(100), n INT NULL,
                        b TINYINT(1), dtm DATETIME(6), bl LONGBLOB, e VARCHAR(10))");
            $insert = $db->prepare("INSERT INTO `$table` (i, f, s, n, b, dtm, bl, e) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
            self::assertSame(8, $insert->paramCount);
            $binary = \random_bytes(256) . "\0\xFF";
            $when = new \DateTimeImmutable('2024-02-29 13:14:15.123456');
            $result = $insert->execute([\PHP_INT_MIN, -1.25, "quote ' and \\ backslash", null, true, $when, $binary, Suit::Hearts]);
            self::assertSame(1, $result->affectedRows());
            self::assertSame(1, $result->lastInsertId());
            $insert->execute([42, 1e100, '', null, false, new \DateTime('2000-01-01 00:00:00'), '', Suit::Spades]);
            $insert->close();
            self::assertTrue($insert->isClosed());

            $select = $db->prepare("SELECT i, f, s, n, b, dtm, bl, e FROM `$table` WHERE id = ?");
            self::assertCount(8, $select->columns());
            $expected = [
                'i' => \PHP_INT_MIN, 'f' => -1.25, 's' => "quote ' and \\ backslash", 'n' => null, 'b' => 1,
                'dtm' => '2024-02-29 13:14:15.123456', 'bl' => $binary, 'e' => 'H',
            ];
            self::assertSame($expected, $select->execute([1])->fetch());
            self::assertSame($expected, $db->query("SELECT i, f, s, n, b, dtm, bl, e FROM `$table` WHERE id = 1")->fetch(), 'text protocol agrees');
            self::assertSame(
                ['i' => 42, 'f' => 1e100, 's' => '', 'n' => null, 'b' => 0, 'dtm' => '2000-01-01 00:00:00.000000', 'bl' => '', 'e' => 'S'],
                $select->execute(['2'])->fetch(),
            );
            self::assertNull($select->execute([3])->fetch());
            // The same statement, executed again with other types for the same placeholder.
            self::assertSame(1, $db->query("SELECT COUNT(*) FROM `$table` WHERE s = ? OR i = ?", ['', 1.0])->fetchColumn());
        });
    }

    public function testQueryWithParametersCachesStatementsAndEvictsTheOldest(): void
    {
        $db = $this->connect();
        for ($i = 0; $i < 40; $i++) {
            self::assertSame($i, $db->query("SELECT ? AS v /* $i */", [$i])->fetchColumn());
        }
        self::assertSame(39, $db->query('SELECT ? AS v /* 39 */', [39])->fetchColumn());
        $prepared = (int) $db->query("SHOW SESSION STATUS LIKE 'Com_stmt_prepare'")->fetchColumn('Value');
        $closed = (int) $db->query("SHOW SESSION STATUS LIKE 'Com_stmt_close'")->fetchColumn('Value');
        self::assertSame(40, $prepared, 'a repeated query reuses its statement');
        self::assertSame(8, $closed, 'beyond 32 cached statements the least recently used are closed');
    }

    public function testInvalidParametersAreRefusedBeforeAnythingIsSent(): void
    {
        $db = $this->connect();
        $statement = $db->prepare('SELECT ? + ?');
        try {
            $statement->execute([1]);
            self::fail('executed with a missing parameter');
        } catch (\InvalidArgumentException $e) {
            self::assertStringContainsString('2 placeholder(s) but 1 parameter(s)', $e->getMessage());
        }
        try {
            $db->query('SELECT ?', [new \stdClass()]);
            self::fail('bound an object');
        } catch (\InvalidArgumentException $e) {
            self::assertStringContainsString('stdClass', $e->getMessage());
        }
        self::assertTrue($db->isUsable());
        self::assertSame(3, $statement->execute([1, 2])->fetchColumn());
    }

    public function testAffectedRowsAndLastInsertId(): void
    {
        $table = $this->table();
        $db = $this->connect();
        $result = $db->query("CREATE TABLE `$table` (id INT AUTO_INCREMENT PRIMARY KEY, v INT)");
        self::assertFalse($result->hasResultSet());
        self::assertSame(0, $result->affectedRows());

        $result = $db->query("INSERT INTO `$table` (v) VALUES (10)");
        self::assertSame(1, $result->affectedRows());
        self::assertSame(1, $result->lastInsertId());
        $result = $db->query("INSERT INTO `$table` (v) VALUES (20), (30), (30)");
        self::assertSame(3, $result->rowCount());
        self::assertSame(2, $result->lastInsertId(), 'the id of the first row of a multi-row insert');
        self::assertStringContainsString('Records: 3', $result->info());

        $result = $db->query("UPDATE `$table` SET v = 30 WHERE v >= 20");
        self::assertSame(1, $result->affectedRows(), 'rows matched but unchanged do not count');
        self::assertSame(0, $result->lastInsertId());
        self::assertSame(3, $db->query("DELETE FROM `$table` WHERE v = 30")->affectedRows());

        $result = $db->query("INSERT INTO `$table` (v) VALUES (?)", [99]);
        self::assertSame(5, $result->lastInsertId());
        $result = $db->query("INSERT IGNORE INTO `$table` (id, v) VALUES (5, 1)");
        self::assertSame(0, $result->affectedRows());
        self::assertSame(1, $result->warnings(), 'the ignored duplicate is a warning');
    }

    public function testResultApi(): void
    {
        $db = $this->connect();
        $result = $db->query('SELECT seq AS n, seq * 10 AS tens FROM seq_1_to_5');
        self::assertTrue($result->hasResultSet());
        self::assertSame(5, $result->rowCount());
        self::assertCount(5, $result);
        self::assertSame(['n', 'tens'], $result->columnNames());
        $columns = $result->columns();
        self::assertSame('n', $columns[0]->name);
        self::assertSame('LONGLONG', $columns[0]->typeName());
        self::assertSame(['n' => 1, 'tens' => 10], $result->fetch());
        self::assertSame(20, $result->fetchColumn('tens'));
        self::assertSame(3, $result->fetchColumn());
        self::assertSame([['n' => 4, 'tens' => 40], ['n' => 5, 'tens' => 50]], $result->fetchAll());
        self::assertNull($result->fetch());
        self::assertNull($result->fetchColumn());
        self::assertSame([], $result->fetchAll());

        $seen = [];
        foreach ($db->query('SELECT seq AS n FROM seq_1_to_3') as $i => $row) {
            $seen[$i] = $row['n'];
        }
        self::assertSame([1, 2, 3], $seen);

        $this->expectException(\OutOfRangeException::class);
        $db->query('SELECT 1 AS a')->fetchColumn('b');
    }

    public function testLargeValuesCrossManyReads(): void
    {
        $db = $this->connect();
        $big = \str_repeat('0123456789abcdef', 5 * 65536); // 5 MiB
        self::assertSame(\strlen($big), $db->query('SELECT LENGTH(?)', [$big])->fetchColumn());
        self::assertSame($big, $db->query('SELECT ? AS v', [$big])->fetchColumn());
        self::assertSame(\str_repeat('x', 3_000_000), $db->query("SELECT REPEAT('x', 3000000)")->fetchColumn());
        $rows = $db->query('SELECT seq, REPEAT(CHAR(65 + seq % 26), seq % 300) AS s FROM seq_1_to_20000')->fetchAll();
        self::assertCount(20000, $rows);
        self::assertSame(\str_repeat(\chr(65 + 12345 % 26), 12345 % 300), $rows[12344]['s']);
    }

    public function testMultipleResultSetsFromMultiStatements(): void
    {
        $table = $this->table();
        $db = $this->connect(self::config()->withMultiStatements());
        $db->query("CREATE TABLE `$table` (id INT PRIMARY KEY)");
        $first = $db->query("SELECT 1 AS a; INSERT INTO `$table` VALUES (1), (2); SELECT 'x' AS b, NULL AS c");
        self::assertSame([['a' => 1]], $first->fetchAll());
        $second = $first->nextResult();
        self::assertNotNull($second);
        self::assertFalse($second->hasResultSet());
        self::assertSame(2, $second->affectedRows());
        $third = $second->nextResult();
        self::assertSame([['b' => 'x', 'c' => null]], $third->fetchAll());
        self::assertNull($third->nextResult());

        // A failing statement in the middle: the results before it are there, nextResult() throws its error.
        $first = $db->query("SELECT 1 AS a; SELECT * FROM `{$table}_missing`; SELECT 3");
        self::assertSame(1, $first->fetchColumn());
        try {
            $first->nextResult();
            self::fail('the second statement should have failed');
        } catch (QueryError $e) {
            self::assertSame(1146, $e->getCode());
        }
        self::assertSame(7, $db->query('SELECT 7')->fetchColumn(), 'the connection is in sync afterwards');

        // Without multi_statements the server refuses several statements.
        $single = $this->connect();
        $this->expectException(QueryError::class);
        $this->expectExceptionCode(1064);
        $single->query('SELECT 1; SELECT 2');
    }

    public function testStoredProcedureResultSets(): void
    {
        $procedure = 'weft_mysql_proc_' . \bin2hex(\random_bytes(4));
        $db = $this->connect();
        $db->query("CREATE PROCEDURE `$procedure`(IN x INT) BEGIN SELECT x AS first; SELECT x * 2 AS second, 'two' AS label; END");
        try {
            foreach (['text' => fn () => $db->query("CALL `$procedure`(21)"), 'binary' => fn () => $db->query("CALL `$procedure`(?)", [21])] as $protocol => $call) {
                $result = $call();
                self::assertSame([['first' => 21]], $result->fetchAll(), $protocol);
                $second = $result->nextResult();
                self::assertSame([['second' => 42, 'label' => 'two']], $second->fetchAll(), $protocol);
                $status = $second->nextResult();
                self::assertNotNull($status, 'CALL ends with a status result');
                self::assertFalse($status->hasResultSet());
                self::assertNull($status->nextResult());
            }
            self::assertSame(1, $db->query('SELECT 1')->fetchColumn());
        } finally {
            $db->query("DROP PROCEDURE IF EXISTS `$procedure`");
        }
    }

    #[DataProvider('modes')]
    public function testTransactions(string $mode): void
    {
        $table = $this->table();
        self::inMode($mode, function () use ($table): void {
            $db = $this->connect();
            $db->query("CREATE TABLE `$table` (id INT PRIMARY KEY) ENGINE=InnoDB");
            self::assertFalse($db->inTransaction());
            $db->begin();
            self::assertTrue($db->inTransaction());
            $db->query("INSERT INTO `$table` VALUES (1)");
            $db->rollback();
            self::assertFalse($db->inTransaction());
            self::assertSame(0, $db->query("SELECT COUNT(*) FROM `$table`")->fetchColumn());

            $db->begin();
            $db->query("INSERT INTO `$table` VALUES (2)");
            $db->commit();
            self::assertSame(1, $db->query("SELECT COUNT(*) FROM `$table`")->fetchColumn());

            $value = $db->transaction(function (Connection $tx) use ($table): string {
                self::assertTrue($tx->inTransaction());
                $tx->query("INSERT INTO `$table` VALUES (3)");
                return 'done';
            });
            self::assertSame('done', $value);
            self::assertFalse($db->inTransaction());

            $thrown = new \DomainException('application failure');
            try {
                $db->transaction(function (Connection $tx) use ($table, $thrown): void {
                    $tx->query("INSERT INTO `$table` VALUES (4)");
                    throw $thrown;
                });
                self::fail('transaction() swallowed the exception');
            } catch (\DomainException $e) {
                self::assertSame($thrown, $e);
            }
            self::assertFalse($db->inTransaction());
            self::assertSame([2, 3], \array_column($db->query("SELECT id FROM `$table` ORDER BY id")->fetchAll(), 'id'));

            // A failing statement inside rolls back the whole transaction.
            try {
                $db->transaction(function (Connection $tx) use ($table): void {
                    $tx->query("INSERT INTO `$table` VALUES (5)");
                    $tx->query("INSERT INTO `$table` VALUES (2)");
                });
                self::fail('duplicate key not reported');
            } catch (QueryError $e) {
                self::assertSame(1062, $e->getCode());
            }
            self::assertSame(2, $db->query("SELECT COUNT(*) FROM `$table`")->fetchColumn());
        });
    }

    #[DataProvider('modes')]
    public function testServerErrorsCarryCodeAndSqlState(string $mode): void
    {
        $table = $this->table();
        self::inMode($mode, function () use ($table): void {
            $db = $this->connect();
            foreach ([
                ['SELEC 1', [], 1064, '42000', 'You have an error in your SQL syntax'],
                ['SELECT * FROM weft_mysql_no_such_table', [], 1146, '42S02', "doesn't exist"],
                ['SELECT * FROM weft_mysql_no_such_table WHERE id = ?', [1], 1146, '42S02', "doesn't exist"],
            ] as [$sql, $params, $code, $sqlState, $text]) {
                try {
                    $db->query($sql, $params);
                    self::fail("no error for $sql");
                } catch (QueryError $e) {
                    self::assertSame($code, $e->getCode(), $sql);
                    self::assertSame($sqlState, $e->sqlState(), $sql);
                    self::assertStringContainsString($text, $e->getMessage());
                    self::assertStringStartsWith("SQLSTATE[$sqlState] $code: ", $e->getMessage());
                }
            }
            $db->query("CREATE TABLE `$table` (id INT PRIMARY KEY)");
            $db->query("INSERT INTO `$table` VALUES (1)");
            try {
                $db->query("INSERT INTO `$table` VALUES (?)", [1]);
                self::fail('duplicate key not reported');
            } catch (QueryError $e) {
                self::assertSame(1062, $e->getCode());
                self::assertSame('23000', $e->sqlState());
                self::assertStringContainsString('Duplicate entry', $e->serverMessage());
            }
            self::assertTrue($db->isUsable(), 'server errors leave the connection usable');
            self::assertSame(1, $db->query('SELECT 1')->fetchColumn());
        });
    }

    #[DataProvider('modes')]
    public function testAConnectionKilledWhileIdleIsLostAndSafeToRetry(string $mode): void
    {
        self::inMode($mode, function (): void {
            $victim = $this->connect();
            $killer = $this->connect();
            $killer->query('KILL ' . $victim->id());
            self::waitUntilGone($killer, $victim->id());
            try {
                $victim->query('SELECT 1');
                self::fail('used a killed connection');
            } catch (ConnectionLost $e) {
                self::assertTrue($e->isSafeToRetry(), 'found dead before the command was sent: ' . $e->getMessage());
                self::assertStringContainsString('before the command was sent', $e->getMessage());
            }
            self::assertFalse($victim->isUsable());
            try {
                $victim->query('SELECT 1');
                self::fail('a lost connection was used again');
            } catch (ConnectionLost $e) {
                self::assertFalse($e->isSafeToRetry());
                self::assertStringContainsString('is unusable', $e->getMessage());
            }
            self::assertFalse($victim->ping());
            $victim->close();
        });
    }

    public function testAConnectionKilledInsideATransactionIsNotSafeToRetry(): void
    {
        $victim = $this->connect();
        $killer = $this->connect();
        $victim->begin();
        $killer->query('KILL ' . $victim->id());
        self::waitUntilGone($killer, $victim->id());
        try {
            $victim->query('SELECT 1');
            self::fail('used a killed connection');
        } catch (ConnectionLost $e) {
            self::assertFalse($e->isSafeToRetry());
            self::assertStringContainsString('transaction is lost', $e->getMessage());
        }
    }

    public function testAConnectionKilledDuringAQueryIsLostAndNotSafeToRetry(): void
    {
        \Weft\run(function (): void {
            $victim = $this->connect();
            $killer = $this->connect();
            $running = \Weft\go(fn () => $victim->query('SELECT SLEEP(20)'));
            self::waitUntil(fn (): bool => $killer->query("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE 'SELECT SLEEP%'", [$victim->id()])->fetchColumn() === 1);
            $killer->query('KILL ' . $victim->id());
            try {
                $running->join(10.0);
                self::fail('the killed query returned');
            } catch (ConnectionLost $e) {
                self::assertFalse($e->isSafeToRetry(), 'the query was in flight');
            }
            self::assertFalse($victim->isUsable());
        });
    }

    public function testTwoCoroutinesOnOneConnectionGetAClearErrorAndTheStreamSurvives(): void
    {
        \Weft\run(function (): void {
            $db = $this->connect();
            $slow = \Weft\go(fn () => $db->query('SELECT SLEEP(0.3) AS s, 42 AS answer')->fetch());
            try {
                $db->query('SELECT 1');
                self::fail('a second coroutine got into a busy connection');
            } catch (ConcurrentUse $e) {
                self::assertMatchesRegularExpression(
                    '/^MySQL connection #\d+ is in use by coroutine #\d+; coroutine #\d+ cannot use it at the same time \(a connection serves one coroutine at a time\): share connections through Weft\\\\Client\\\\Mysql\\\\Pool$/',
                    $e->getMessage(),
                );
            }
            try {
                $db->prepare('SELECT 1');
                self::fail('a second coroutine got into a busy connection');
            } catch (ConcurrentUse) {
            }
            self::assertSame(['s' => 0, 'answer' => 42], $slow->join(5.0));
            self::assertSame(2, $db->query('SELECT 2')->fetchColumn());
        });

        // Outside of coroutines: main code blocks on a connection a coroutine is using.
        $db = $this->connect();
        \Weft\run(function () use ($db): void {
            \Weft\go(fn () => $db->query('SELECT SLEEP(0.2)'));
            $this->expectException(ConcurrentUse::class);
            $db->query('SELECT 1');
        });
    }

    public function testCloseAndAfterwards(): void
    {
        $db = $this->connect();
        $id = $db->id();
        $db->close();
        $db->close();
        self::assertFalse($db->isUsable());
        self::assertFalse($db->ping());
        try {
            $db->query('SELECT 1');
            self::fail('a closed connection ran a query');
        } catch (ConnectionLost $e) {
            self::assertSame("MySQL connection #$id is unusable: it was closed", $e->getMessage());
        }
        $observer = $this->connect();
        self::waitUntilGone($observer, $id); // COM_QUIT ended the session on the server
    }

    public function testConnectByUrlString(): void
    {
        $db = Connection::connect(self::url() . '?charset=utf8mb4&connect_timeout=5');
        self::assertSame('héllo', $db->query("SELECT 'héllo'")->fetchColumn());
        $db->close();
    }

    /** Waits until the server no longer lists connection $id (KILL and COM_QUIT finish asynchronously). */
    public static function waitUntilGone(Connection $observer, int $id): void
    {
        self::waitUntil(fn (): bool => $observer->query('SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?', [$id])->fetchColumn() === 0);
        \Weft\sleep(0.05); // the socket's FIN reaches us right after the server thread is gone
    }

    public static function waitUntil(\Closure $condition, float $timeout = 10.0): void
    {
        $deadline = \hrtime(true) / 1e9 + $timeout;
        while (!$condition()) {
            if (\hrtime(true) / 1e9 > $deadline) {
                self::fail("condition not met within $timeout s");
            }
            \Weft\sleep(0.01);
        }
    }
}

enum Suit: string
{
    case Hearts = 'H';
    case Spades = 'S';
}
