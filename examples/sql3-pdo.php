<?php

declare(strict_types=1);

/*
 * The 3-SQL endpoint of examples/sql3.php written with plain PDO, as for PHP-FPM: two point selects,
 * then five rows returned as JSON. Under `bin/weft serve` (coroutine mode) the stream hooks make each
 * query suspend only its own request, so one worker serves many requests at once; in sync and fpm modes
 * the same file blocks as usual.
 *
 *   bin/weft serve examples/sql3-pdo.php --workers 2
 *   DATABASE_URL   mysql://weft:weft@127.0.0.1:13306/weft (default)
 *   DB_POOL        PDO connections a worker opens at most (default 16)
 *
 * A PDO connection serves one request at a time, so each worker keeps its PDO objects in Weft's own
 * connection pool (Weft\Pool\Pool, the one under Weft's MySQL, PostgreSQL and Redis clients): a request
 * borrows one (opening one while fewer than DB_POOL are open, else waiting, first come first served,
 * for one to come back; waiting suspends only this request) and gives it back when it is done. A
 * connection that failed in a request is discarded, and its slot goes to the longest waiter, who opens a
 * fresh one: when the database goes away, every waiter gets either a working connection or the connect
 * error (a 500 and a log line), never a wait without end. A connection idle for more than a second is
 * checked with `SELECT 1` before it is handed out, so one the server dropped meanwhile is replaced
 * instead of failing the request. A waiter gives up after the pool's borrow timeout (5 s, PoolExhausted).
 *
 * Opening a connection per request instead costs a TCP and auth handshake each time, and hundreds of
 * concurrent requests would open hundreds of connections. (PDO::ATTR_PERSISTENT is not the way to
 * share connections between coroutines: persistent connections are not hooked and block.)
 */

use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Pool\Pool;
use Weft\Pool\PoolOptions;

return static function (Request $request): Response {
    // One pool per worker process, made on its first request: never before the fork, so no two
    // processes share a connection.
    static $pool = null;
    static $seeded = false;
    $pool ??= new Pool(
        connect: static function (): PDO {
            $url = \parse_url(\getenv('DATABASE_URL') ?: 'mysql://weft:weft@127.0.0.1:13306/weft');
            return new PDO(
                \sprintf('mysql:host=%s;port=%d;dbname=%s', $url['host'] ?? '127.0.0.1', $url['port'] ?? 3306, \ltrim($url['path'] ?? '/weft', '/')),
                \urldecode($url['user'] ?? 'weft'),
                \urldecode($url['pass'] ?? ''),
                [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION],
            );
        },
        // PDO has no close(): the connection closes when the pool drops the last reference to it.
        close: static function (PDO $pdo): void {
        },
        check: static fn (PDO $pdo): bool => $pdo->query('SELECT 1') !== false,
        options: PoolOptions::defaults()->withMax(\max(1, (int) (\getenv('DB_POOL') ?: 16))),
    );

    /** @var PDO $pdo */
    $pdo = $pool->borrow();
    try {
        if (!$seeded) {
            $pdo->exec('CREATE TABLE IF NOT EXISTS test (id INT PRIMARY KEY, name VARCHAR(64)) ENGINE=InnoDB');
            $pdo->exec("INSERT IGNORE INTO test (id, name) VALUES (1, 'name-1'), (2, 'name-2'), (3, 'name-3'), (4, 'name-4'), (5, 'name-5')");
            $seeded = true;
        }
        $point = $pdo->prepare('SELECT * FROM test WHERE id = ?');
        $point->execute([1]);
        $point->fetchAll();
        $point->execute([2]);
        $point->fetchAll();
        $rows = $pdo->query('SELECT * FROM test LIMIT 5')->fetchAll(PDO::FETCH_ASSOC);
    } catch (\Throwable $e) {
        // The connection may be dead or stopped in the middle of a result: never reuse it. Its slot goes
        // to the next waiter, who opens a fresh connection.
        $pool->discard($pdo);
        throw $e;
    }
    $pool->release($pdo);

    return new Response(200, ['Content-Type' => 'application/json'], \json_encode($rows, \JSON_THROW_ON_ERROR));
};
