<?php

// Calls a (slow) upstream HTTP service for every request and answers with its body: the "many
// requests waiting on I/O" scenario. In coroutine mode a worker keeps serving while its requests wait.
//
//   php examples/delay-server.php --port 9501 --delay 1 &
//   bin/weft serve examples/upstream.php --workers 2
//   UPSTREAM_URL   the upstream to call (default http://127.0.0.1:9501/)

declare(strict_types=1);

use Weft\Client\Http\Client;
use Weft\Client\Http\RequestFailed;
use Weft\Client\Http\RequestOptions;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;

return static function (Request $request): Response {
    // One client per worker process, made on its first request (after the fork): its kept-alive
    // connections to the upstream are shared by the requests this worker serves at once.
    static $client = null;
    static $url = null;
    if ($client === null) {
        $client = new Client(RequestOptions::defaults()->withTimeout(60.0), maxIdlePerOrigin: 512);
        $url = \getenv('UPSTREAM_URL') ?: 'http://127.0.0.1:9501/';
    }
    try {
        $upstream = $client->get($url);
    } catch (RequestFailed $e) {
        return new Response(502, ['Content-Type' => 'text/plain'], $e->getMessage() . "\n");
    }
    return new Response($upstream->status() === 200 ? 200 : 502, ['Content-Type' => 'text/plain'], $upstream->body());
};
