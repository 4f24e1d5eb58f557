<?php

// A 10 ms wait per request (the sleep experiment of docs/benchmarks.md). In coroutine mode Weft\sleep() suspends only this
// request; in sync mode the very same call blocks the worker: compare the two with wrk.

declare(strict_types=1);

use Weft\Http\Message\Request;
use Weft\Http\Message\Response;

use function Weft\sleep;

return static function (Request $request): Response {
    sleep((float) ($request->queryParam('ms', 10)) / 1000);
    return new Response(200, ['Content-Type' => 'text/plain'], 'Hello World');
};
