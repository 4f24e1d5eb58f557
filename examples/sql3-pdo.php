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
 * A PDO connection serves one request at a time: each request takes one from a small per-worker pool
 * (opening one while fewer than DB_POOL are open, else waiting for one to come back: a Weft Channel
 * holds the idle ones, and waiting on it suspends only this request) and gives it back when it is done.
 * Opening a connection per request instead costs a TCP and auth handshake each time, and hundreds of
 * concurrent requests would open hundreds of connections. (PDO::ATTR_PERSISTENT is not the way to
 * share connections between coroutines: persistent connections are not hooked and block.)
 */

use Weft\Coroutine\Channel;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;

$connect = static function (): PDO {
    $url = \parse_url(\getenv('DATABASE_URL') ?: 'mysql://weft:weft@127.0.0.1:13306/weft');
    return new PDO(
        \sprintf('mysql:host=%s;port=%d;dbname=%s', $url['host'] ?? '127.0.0.1', $url['port'] ?? 3306, \ltrim($url['path'] ?? '/weft', '/')),
        \urldecode($url['user'] ?? 'weft'),
        \urldecode($url['pass'] ?? ''),
        [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION],
    );
};

return static function (Request $request) use ($connect): Response {
    static $idle = null;
    static $open = 0;
    static $seeded = false;
    $size = \max(1, (int) (\getenv('DB_POOL') ?: 16));
    $idle ??= new Channel($size);

    if ($idle->count() === 0 && $open < $size) {
        $open++;
        try {
            $pdo = $connect();
        } catch (\Throwable $e) {
            $open--;
            throw $e;
        }
    } else {
        /** @var PDO $pdo */
        $pdo = $idle->receive();
    }
    try {
        if (!$seeded) {
            $seeded = true;
            $pdo->exec('CREATE TABLE IF NOT EXISTS test (id INT PRIMARY KEY, name VARCHAR(64)) ENGINE=InnoDB');
            $pdo->exec("INSERT IGNORE INTO test (id, name) VALUES (1, 'name-1'), (2, 'name-2'), (3, 'name-3'), (4, 'name-4'), (5, 'name-5')");
        }
        $point = $pdo->prepare('SELECT * FROM test WHERE id = ?');
        $point->execute([1]);
        $point->fetchAll();
        $point->execute([2]);
        $point->fetchAll();
        $rows = $pdo->query('SELECT * FROM test LIMIT 5')->fetchAll(PDO::FETCH_ASSOC);
    } catch (\Throwable $e) {
        $pdo = null; // a connection that failed mid-request is not reused: its slot opens a new one
        $open--;
        throw $e;
    } finally {
        if ($pdo !== null) {
            $idle->send($pdo);
        }
    }

    return new Response(200, ['Content-Type' => 'application/json'], \json_encode($rows, \JSON_THROW_ON_ERROR));
};
