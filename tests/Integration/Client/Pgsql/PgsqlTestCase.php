<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Client\Pgsql;

use PHPUnit\Framework\TestCase;
use Weft\Client\Pgsql\Config;
use Weft\Client\Pgsql\Connection;
use Weft\Loop\Loop;

/**
 * Runs against the PostgreSQL of scripts/services.sh (WEFT_TEST_PGSQL_URL). Every test gets a fresh loop
 * and closes the connections it opened.
 */
abstract class PgsqlTestCase extends TestCase
{
    /** @var list<Connection> */
    private array $opened = [];

    protected function setUp(): void
    {
        if (!\extension_loaded('pgsql')) {
            self::fail('The pgsql extension is missing: apt-get install php8.2-pgsql (scripts/setup.sh does)');
        }
        Loop::reset('select');
    }

    protected function tearDown(): void
    {
        foreach ($this->opened as $connection) {
            $connection->close();
        }
        $this->opened = [];
        Loop::reset('select');
    }

    protected static function url(): string
    {
        $url = \getenv('WEFT_TEST_PGSQL_URL');
        return \is_string($url) && $url !== '' ? $url : 'pgsql://weft:weft@127.0.0.1:15432/weft';
    }

    protected static function config(): Config
    {
        return Config::fromUrl(self::url())->withConnectTimeout(5.0);
    }

    protected function connect(?Config $config = null): Connection
    {
        try {
            $connection = Connection::connect($config ?? self::config());
        } catch (\Weft\Socket\ConnectException $e) {
            if ($config === null) {
                self::fail($e->getMessage() . ' -- is `bash scripts/services.sh start` running?');
            }
            throw $e;
        }
        return $this->opened[] = $connection;
    }

    /** A table of this test's own, gone with its session. */
    protected function tempTable(Connection $connection, string $name = 'users'): void
    {
        $connection->query(
            "CREATE TEMPORARY TABLE $name (id serial PRIMARY KEY, email text UNIQUE NOT NULL, score int)",
        );
    }
}
