<?php

declare(strict_types=1);

namespace Weft\Client\Mysql;

/**
 * The table the SQL example (examples/sql3.php) and the point-select benchmark read:
 * test(id INT PRIMARY KEY, name VARCHAR(64)) with rows 1..N named "name-<id>".
 */
final class Fixtures
{
    public const TABLE = 'test';
    public const DEFAULT_ROWS = 500;

    private function __construct()
    {
    }

    /**
     * Creates the table if missing and inserts the rows that are missing. Idempotent, and safe to run
     * from several processes at once (CREATE TABLE IF NOT EXISTS, INSERT IGNORE).
     */
    public static function seedTestTable(Connection|Pool $db, int $rows = self::DEFAULT_ROWS): void
    {
        if ($rows < 1) {
            throw new \InvalidArgumentException('At least one row is needed');
        }
        $db->query('CREATE TABLE IF NOT EXISTS ' . self::TABLE . ' (id INT PRIMARY KEY, name VARCHAR(64)) ENGINE=InnoDB');
        for ($from = 1; $from <= $rows; $from += 500) {
            $values = [];
            for ($id = $from, $to = \min($rows, $from + 499); $id <= $to; $id++) {
                $values[] = "($id, 'name-$id')";
            }
            $db->query('INSERT IGNORE INTO ' . self::TABLE . ' (id, name) VALUES ' . \implode(', ', $values));
        }
    }
}
