<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Client\Mysql;

use PHPUnit\Framework\TestCase;
use Weft\Client\Mysql\Config;
use Weft\Client\Mysql\Connection;

/**
 * Base of the tests against the real MariaDB started by scripts/services.sh. Each test gets tables of
 * its own (random names, dropped afterwards), so the suite can run next to anyone else's.
 */
abstract class MysqlTestCase extends TestCase
{
    /** @var list<Connection> */
    private array $opened = [];
    /** @var list<string> */
    private array $tables = [];

    public static function url(): string
    {
        return \getenv('WEFT_TEST_MYSQL_URL') ?: 'mysql://weft:weft@127.0.0.1:13306/weft';
    }

    public static function config(): Config
    {
        return Config::fromUrl(self::url())->withConnectTimeout(10.0);
    }

    /** @return iterable<string, array{string}> */
    public static function modes(): iterable
    {
        yield 'sync' => ['sync'];
        yield 'coroutine' => ['coroutine'];
    }

    /** Runs $fn outside any coroutine (sync mode) or as the main coroutine of Weft\run(). */
    protected static function inMode(string $mode, \Closure $fn): mixed
    {
        return $mode === 'sync' ? $fn() : \Weft\run($fn);
    }

    protected function connect(?Config $config = null): Connection
    {
        $connection = Connection::connect($config ?? self::config());
        $this->opened[] = $connection;
        return $connection;
    }

    /** A fresh table name, dropped after the test. */
    protected function table(string $prefix = 'weft_mysql'): string
    {
        $name = $prefix . '_' . \bin2hex(\random_bytes(4));
        $this->tables[] = $name;
        return $name;
    }

    protected function tearDown(): void
    {
        if ($this->tables !== []) {
            $cleanup = Connection::connect(self::config());
            foreach ($this->tables as $table) {
                $cleanup->query("DROP TABLE IF EXISTS `$table`");
            }
            $cleanup->close();
            $this->tables = [];
        }
        foreach ($this->opened as $connection) {
            try {
                $connection->close();
            } catch (\Throwable) {
                // Already gone, or busy in a test that failed half-way.
            }
        }
        $this->opened = [];
    }
}
