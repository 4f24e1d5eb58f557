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
 *   DB_IDLE        PDO connections a worker keeps between requests (default 16)
 *
 * A PDO connection serves one request at a time: each request takes one from a small per-worker list
 * of idle connections (or opens one) and gives it back when it is done. (PDO::ATTR_PERSISTENT is not
 * the way to share connections between coroutines: persistent connections are not hooked and block.)
 */

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
    /** @var list<PDO> $idle */
    static $idle = [];
    static $seeded = false;

    $pdo = \array_pop($idle) ?? $connect();
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
        $pdo = null; // a connection that failed mid-request is not reused
        throw $e;
    } finally {
        if ($pdo !== null && \count($idle) < (int) (\getenv('DB_IDLE') ?: 16)) {
            $idle[] = $pdo;
        }
    }

    return new Response(200, ['Content-Type' => 'application/json'], \json_encode($rows, \JSON_THROW_ON_ERROR));
};
