<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Hook;

use PHPUnit\Framework\TestCase;
use Weft\Hook\Hooks;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\ServerProcess;

/**
 * examples/sql3-pdo.php under `bin/weft serve` with one PDO connection per worker (DB_POOL=1) and ten
 * requests queued for it, while the real test MariaDB is killed (SIGKILL, then scripts/services.sh start
 * mariadb at once: other engineers share it). The request holding the connection fails with it; each of
 * the nine waiting for it must then get an answer (here the connect error, as a 500), none may be left
 * waiting, and once the server is back the example serves again. When only the connection is killed
 * (the server stays up), the nine get a fresh connection each and are served.
 *
 * The connection is held busy deterministically: the test locks the example's table from a connection of
 * its own, so the first request's SELECT waits on the lock until the kill ends both. Everything runs
 * in a database of the test's own (weft_pdopool_*), so nobody else's table is locked.
 */
final class PdoPoolOutageTest extends TestCase
{
    private const QUEUED = 10;

    private string $database = '';

    protected function setUp(): void
    {
        if (!Hooks::isSupported()) {
            self::markTestSkipped('the weft extension is not built (bash scripts/build-ext.sh): without the hooks PDO blocks the worker and no request waits for a connection');
        }
        if (!\extension_loaded('pdo_mysql')) {
            self::markTestSkipped('pdo_mysql is not loaded');
        }
        $this->database = 'weft_pdopool_' . \bin2hex(\random_bytes(4));
        self::admin()->exec("CREATE DATABASE `{$this->database}`");
    }

    protected function tearDown(): void
    {
        // Other engineers share this MariaDB: it must be up again whatever happened above.
        if (!self::mariadbAnswers()) {
            self::services('start');
        }
        if ($this->database !== '') {
            self::admin()->exec("DROP DATABASE IF EXISTS `{$this->database}`");
        }
    }

    public function testWaitersAreAnsweredWhenTheDatabaseIsKilledUnderThem(): void
    {
        $server = $this->server();
        try {
            [$clients] = $this->queueBehindALock($server);
            self::killMariadb();
            try {
                // The request on the killed connection fails, and each waiter in turn gets a fresh
                // connect: ten answers, no one left waiting.
                $statuses = self::answers($clients, 30.0);
            } finally {
                [$code, $log] = self::services('start');
            }
            self::assertSame(0, $code, "services.sh start mariadb failed:\n$log");
            $stranded = \array_keys($statuses, null, true);
            self::assertSame([], $stranded, \sprintf(
                "requests %s were never answered (statuses: %s)\n%s",
                \implode(', ', $stranded),
                \json_encode($statuses),
                $server->output(),
            ));
            // Down, a waiter's connect fails (500); but others share this MariaDB and may start it again
            // meanwhile (`services.sh start`), and then a waiter is served.
            foreach ($statuses as $i => $status) {
                self::assertContains($status, [200, 500], "request $i");
            }
            self::assertContains(500, $statuses, 'the request on the killed connection fails');

            // The pool recovered: a new request opens a fresh connection to the restarted server.
            $response = RawHttp::get($server->address());
            self::assertSame(200, $response['status'], $server->output());
            self::assertCount(5, \json_decode($response['body'], true, 512, \JSON_THROW_ON_ERROR));
        } finally {
            $server->stop();
        }
        self::assertStringContainsString('PDOException', $server->output(), 'the failures are logged');
    }

    /**
     * Only the connection dies (KILL on the server, which stays up): the request on it fails, and the
     * nine waiting get a fresh connection each in turn and are served.
     */
    public function testWaitersGetAFreshConnectionWhenTheirsIsKilled(): void
    {
        $server = $this->server();
        try {
            [$clients, $lock] = $this->queueBehindALock($server);
            $id = (int) $lock->query("SELECT ID FROM information_schema.PROCESSLIST WHERE DB = '{$this->database}' AND STATE LIKE 'Waiting for table%lock'")->fetchColumn();
            self::assertGreaterThan(0, $id);
            $lock->exec("KILL CONNECTION $id");
            $lock->exec('UNLOCK TABLES');

            $statuses = self::answers($clients, 30.0);
            \sort($statuses);
            self::assertSame([200, 200, 200, 200, 200, 200, 200, 200, 200, 500], $statuses, $server->output());
        } finally {
            $server->stop();
        }
    }

    private function server(): ServerProcess
    {
        $url = \parse_url(self::url());
        return new ServerProcess(
            [\dirname(__DIR__, 3) . '/examples/sql3-pdo.php', '--workers', '1'],
            ['DB_POOL' => '1', 'DATABASE_URL' => \sprintf('mysql://%s:%s@%s:%d/%s', $url['user'], $url['pass'], $url['host'], $url['port'], $this->database)],
        );
    }

    /**
     * Ten requests for the worker's one connection: the first holds it, its SELECT waiting on a table
     * lock the test holds; the nine others wait for the connection.
     *
     * @return array{list<RawHttp>, \PDO} the clients, and the connection holding the lock
     */
    private function queueBehindALock(ServerProcess $server): array
    {
        // Seeds the table and leaves the worker's one connection idle in its pool.
        self::assertSame(200, RawHttp::get($server->address())['status'], $server->output());
        $lock = self::admin($this->database);
        $lock->exec('LOCK TABLES test WRITE');
        $clients = [];
        for ($i = 0; $i < self::QUEUED; $i++) {
            $clients[] = (new RawHttp($server->address(), 60))->send("GET /?n=$i HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
        }
        ServerProcess::waitFor(
            static fn (): bool => ($server->status()['workers'][0]['coroutines'] ?? 0) >= self::QUEUED,
            20.0,
            'the ten requests to reach the application',
        );
        ServerProcess::waitFor(fn (): bool => $this->lockWaiters($lock) >= 1, 20.0, 'the first request to wait on the table lock');
        return [$clients, $lock];
    }

    /**
     * Waits until every client has a complete response or the deadline passes, without blocking on any
     * one of them: the status of each, null for one never answered.
     *
     * @param list<RawHttp> $clients
     * @return list<int|null>
     */
    private static function answers(array $clients, float $timeout): array
    {
        $deadline = \microtime(true) + $timeout;
        $raw = \array_fill(0, \count($clients), '');
        $done = \array_fill(0, \count($clients), false);
        while (\in_array(false, $done, true) && ($left = $deadline - \microtime(true)) > 0) {
            $read = [];
            foreach ($clients as $i => $client) {
                if (!$done[$i]) {
                    $read[$i] = $client->socket;
                }
            }
            $write = $except = null;
            if (@\stream_select($read, $write, $except, 0, (int) \min(200_000, $left * 1e6)) > 0) {
                foreach ($read as $i => $socket) {
                    $chunk = \fread($socket, 65536);
                    if ($chunk === '' || $chunk === false) {
                        $done[$i] = true; // Connection: close, so the response ends with the connection
                    } else {
                        $raw[$i] .= $chunk;
                    }
                }
            }
        }
        $statuses = [];
        foreach ($raw as $i => $bytes) {
            $statuses[$i] = $done[$i] && \preg_match('/\AHTTP\/1\.1 (\d{3}) /', $bytes, $m) === 1 ? (int) $m[1] : null;
            $clients[$i]->close();
        }
        return $statuses;
    }

    private function lockWaiters(\PDO $pdo): int
    {
        return (int) $pdo->query("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '{$this->database}' AND STATE LIKE 'Waiting for table%lock'")->fetchColumn();
    }

    private static function url(): string
    {
        return \getenv('WEFT_TEST_MYSQL_URL') ?: 'mysql://weft:weft@127.0.0.1:13306/weft';
    }

    private static function admin(?string $database = null): \PDO
    {
        $url = \parse_url(self::url());
        return new \PDO(
            \sprintf('mysql:host=%s;port=%d;dbname=%s', $url['host'], $url['port'], $database ?? \ltrim($url['path'], '/')),
            $url['user'],
            $url['pass'],
            [\PDO::ATTR_ERRMODE => \PDO::ERRMODE_EXCEPTION],
        );
    }

    private static function mariadbAnswers(): bool
    {
        try {
            self::admin()->query('SELECT 1');
            return true;
        } catch (\PDOException) {
            return false;
        }
    }

    /**
     * SIGKILL to the test MariaDB (its pid file names it): every connection ends at once, where a clean
     * stop lets statements finish in an order of its own (then whether the request holding the
     * connection fails would be a race). InnoDB recovers on the next start.
     */
    private static function killMariadb(): void
    {
        $pidFile = \dirname(__DIR__, 3) . '/var/services/mariadb/mysqld.pid';
        $pid = (int) @\file_get_contents($pidFile);
        self::assertGreaterThan(1, $pid, "no MariaDB pid in $pidFile");
        self::assertSame('mariadbd', \trim((string) @\file_get_contents("/proc/$pid/comm")), "pid $pid is not the test MariaDB");
        \posix_kill($pid, \SIGKILL);
        $url = \parse_url(self::url());
        ServerProcess::waitFor(static function () use ($url): bool {
            $socket = @\stream_socket_client("tcp://{$url['host']}:{$url['port']}", $errno, $error, 1.0);
            if ($socket === false) {
                return true;
            }
            \fclose($socket);
            return false;
        }, 10.0, 'MariaDB to be gone');
    }

    /** @return array{int, string} exit code and output of `scripts/services.sh $command mariadb` */
    private static function services(string $command): array
    {
        $root = \dirname(__DIR__, 3);
        $process = \proc_open(['bash', $root . '/scripts/services.sh', $command, 'mariadb'], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes, $root);
        $output = (string) \stream_get_contents($pipes[1]);
        return [\proc_close($process), $output];
    }
}
