<?php

declare(strict_types=1);

namespace Weft\Bench\Client;

use Weft\Client\Mysql\Connection;
use Weft\Client\Mysql\Fixtures;

/**
 * Point selects per second over one connection, one query at a time (latency-bound: what a request
 * handler doing a few queries sees): `SELECT name FROM test WHERE id = ?` with ids cycling over the
 * table, with Weft's client from one coroutine (text protocol and a prepared statement; also text in
 * sync mode), and with PDO (pdo_mysql / mysqlnd) in the same process: PDO::query() with PDO's default
 * emulated prepares (one COM_QUERY, like ours) and a native prepared statement. Variants run in interleaved
 * rounds so that a noisy machine disturbs all of them alike; each figure is the median round.
 */
final class MysqlPointSelect
{
    private const ROUNDS = 5;

    /**
     * @return array{
     *   weft_text_qps: float, weft_prepared_qps: float, weft_sync_text_qps: float,
     *   pdo_text_qps: float, pdo_prepared_qps: float,
     *   ratio_text: float, ratio_prepared: float, rows: int, seconds: float, rounds: int, server: string
     * }
     */
    public static function run(string $url, float $seconds): array
    {
        if ($seconds <= 0) {
            throw new \InvalidArgumentException('The duration must be positive');
        }
        if (!\extension_loaded('pdo_mysql')) {
            throw new \RuntimeException('pdo_mysql is not loaded (Debian: apt-get install php8.2-mysql)');
        }
        $rows = Fixtures::DEFAULT_ROWS;
        $connection = Connection::connect($url);
        Fixtures::seedTestTable($connection, $rows);
        // Two PDO handles: with native prepares PDO::query() would prepare, execute and close a
        // server-side statement per call, so the text variant gets PDO's default (emulation: COM_QUERY).
        $pdo = self::pdo($url, true);
        $pdoNative = self::pdo($url, false);
        $sql = 'SELECT name FROM ' . Fixtures::TABLE . ' WHERE id = ';
        $statement = $connection->prepare($sql . '?');
        $pdoStatement = $pdoNative->prepare($sql . '?');

        $slice = $seconds / (self::ROUNDS * 5);
        $variants = [
            'weft_text_qps' => static fn (int $id): mixed => $connection->query($sql . $id)->fetchColumn(),
            'weft_prepared_qps' => static fn (int $id): mixed => $statement->execute([$id])->fetchColumn(),
            'weft_sync_text_qps' => static fn (int $id): mixed => $connection->query($sql . $id)->fetchColumn(),
            'pdo_text_qps' => static fn (int $id): mixed => $pdo->query($sql . $id)->fetchColumn(),
            'pdo_prepared_qps' => static function (int $id) use ($pdoStatement): mixed {
                $pdoStatement->execute([$id]);
                return $pdoStatement->fetchColumn();
            },
        ];
        $figures = \array_fill_keys(\array_keys($variants), []);
        for ($round = 0; $round < self::ROUNDS; $round++) {
            foreach ($variants as $name => $query) {
                $figures[$name][] = \str_starts_with($name, 'weft_') && $name !== 'weft_sync_text_qps'
                    ? \Weft\run(static fn (): float => self::measure($query, $slice, $rows))
                    : self::measure($query, $slice, $rows);
            }
        }
        $statement->close();
        $connection->close();

        $result = [];
        foreach ($figures as $name => $values) {
            \sort($values);
            $result[$name] = \round($values[\intdiv(\count($values), 2)], 1);
        }
        $result['ratio_text'] = \round($result['weft_text_qps'] / $result['pdo_text_qps'], 3);
        $result['ratio_prepared'] = \round($result['weft_prepared_qps'] / $result['pdo_prepared_qps'], 3);
        $result['rows'] = $rows;
        $result['seconds'] = $seconds;
        $result['rounds'] = self::ROUNDS;
        $result['server'] = $connection->serverVersion();
        return $result;
    }

    /** Runs $query with cycling ids for about $seconds and returns queries per second. */
    private static function measure(\Closure $query, float $seconds, int $rows): float
    {
        $start = \hrtime(true);
        $until = $start + (int) ($seconds * 1e9);
        $count = 0;
        do {
            // Check the clock every 100 queries: hrtime() is cheap but not free.
            for ($i = 0; $i < 100; $i++) {
                $name = $query($count % $rows + 1);
                if ($name === null) {
                    throw new \UnexpectedValueException('A point select returned no row');
                }
                $count++;
            }
            $now = \hrtime(true);
        } while ($now < $until);
        return $count / (($now - $start) / 1e9);
    }

    /** PDO over mysqlnd; $emulate false: native server-side prepared statements. */
    private static function pdo(string $url, bool $emulate): \PDO
    {
        $config = \Weft\Client\Mysql\Config::fromUrl($url);
        $dsn = $config->unixSocket !== null
            ? "mysql:unix_socket={$config->unixSocket}"
            : "mysql:host={$config->host};port={$config->port}";
        $dsn .= ';charset=' . $config->charset . ($config->database !== null ? ";dbname={$config->database}" : '');
        return new \PDO($dsn, $config->user, $config->password, [
            \PDO::ATTR_ERRMODE => \PDO::ERRMODE_EXCEPTION,
            \PDO::ATTR_EMULATE_PREPARES => $emulate,
        ]);
    }
}
