<?php

declare(strict_types=1);

/*
 * Three queries per request through a pooled MySQL/MariaDB client: two point selects, then five rows
 * returned as JSON. In coroutine mode the pool is shared by all the requests a worker serves at once.
 *
 *   bin/weft serve examples/sql3.php --workers 4
 *   DATABASE_URL   mysql://weft:weft@127.0.0.1:13306/weft (default)
 *   DB_POOL_SIZE   connections per worker process (default 16)
 *
 * The table test(id, name) is created and seeded on the first request of each worker if missing.
 */

use Weft\Client\Mysql\Fixtures;
use Weft\Client\Mysql\Pool;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Pool\PoolOptions;

return static function (Request $request): Response {
    // One pool per worker process, made on its first request: never before the fork, so no two
    // processes share a socket.
    static $pool = null;
    if ($pool === null) {
        $size = (int) (\getenv('DB_POOL_SIZE') ?: 16);
        $pool = new Pool(
            \getenv('DATABASE_URL') ?: 'mysql://weft:weft@127.0.0.1:13306/weft',
            PoolOptions::defaults()->withMax(\max(1, $size)),
        );
        Fixtures::seedTestTable($pool);
    }

    $pool->query('select * from test where id = 1');
    $pool->query('select * from test where id = 2');
    $rows = $pool->query('select * from test limit 5')->fetchAll();

    return new Response(200, ['Content-Type' => 'application/json'], \json_encode($rows, \JSON_THROW_ON_ERROR));
};
