<?php

// A user's session kept in Redis, so that any Weft instance behind a load balancer can serve any
// request of the user, and a session survives the restart of the instance that created it.
//
//   REDIS_URL=redis://127.0.0.1:16379 INSTANCE=a bin/weft serve examples/session.php --port 8081

declare(strict_types=1);

use Weft\Client\Redis\Pool;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;

// The test instance of scripts/services.sh by default; point REDIS_URL at yours.
$redis = new Pool(getenv('REDIS_URL') ?: 'redis://127.0.0.1:16379');
$instance = getenv('INSTANCE') ?: (string) gethostname();

return static function (Request $request) use ($redis, $instance): Response {
    $id = $request->cookies()['weft_session'] ?? '';
    $headers = ['Content-Type' => 'application/json'];
    if (!preg_match('/^[0-9a-f]{32}$/', $id)) {
        $id = bin2hex(random_bytes(16));
        $headers['Set-Cookie'] = "weft_session=$id; Path=/; HttpOnly; SameSite=Lax";
    }
    $key = "session:$id";
    if ($request->path() === '/health') {
        return new Response(200, ['Content-Type' => 'text/plain'], "ok\n");
    }
    // One round trip: count the visit and keep the session for 30 minutes after the last one.
    [$visits] = $redis->pipeline(static function ($pipe) use ($key): void {
        $pipe->command('HINCRBY', $key, 'visits', 1);
        $pipe->command('EXPIRE', $key, 1800);
    });
    return new Response(200, $headers, json_encode(['visits' => (int) $visits, 'served_by' => $instance, 'pid' => getmypid()]) . "\n");
};
