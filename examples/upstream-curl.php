<?php

// The upstream call written as PHP code usually has it, with curl: the handler shape of the classic
// "Workerman vs Swoole, slow upstream through curl" experiment. Nothing here knows about Weft: in
// coroutine mode with the extension loaded, curl_exec() suspends only this request while it waits
// (the curl hook); with `--hooks none`, in sync mode, or without the extension, it blocks the worker.
//
//   php examples/delay-server.php --port 9501 --delay 1 &
//   bin/weft serve examples/upstream-curl.php --workers 2
//   UPSTREAM_URL   the upstream to call (default http://127.0.0.1:9501/)

declare(strict_types=1);

use Weft\Http\Message\Request;
use Weft\Http\Message\Response;

return static function (Request $request): Response {
    $ch = \curl_init(\getenv('UPSTREAM_URL') ?: 'http://127.0.0.1:9501/');
    \curl_setopt($ch, \CURLOPT_RETURNTRANSFER, true);
    \curl_setopt($ch, \CURLOPT_TIMEOUT, 60);
    $body = \curl_exec($ch);
    if ($body === false) {
        return new Response(502, ['Content-Type' => 'text/plain'], 'upstream: ' . \curl_error($ch) . "\n");
    }
    $status = \curl_getinfo($ch, \CURLINFO_RESPONSE_CODE);
    return new Response($status === 200 ? 200 : 502, ['Content-Type' => 'text/plain'], $body);
};
