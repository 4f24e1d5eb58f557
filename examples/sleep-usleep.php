<?php

declare(strict_types=1);

/*
 * examples/sleep.php written as plain PHP has it: the handler waits 10 ms with usleep(). Under
 * `bin/weft serve` in coroutine mode the sleep hook (the extension's, `--hooks all` by default) makes
 * the call suspend only this request, as Weft\sleep() does; with `--hooks none` it blocks the worker.
 *
 *   bin/weft serve examples/sleep-usleep.php --workers 1
 */

use Weft\Http\Message\Request;
use Weft\Http\Message\Response;

return static function (Request $request): Response {
    \usleep((int) $request->queryParam('ms', 10) * 1000);
    return new Response(200, ['Content-Type' => 'text/plain'], 'Hello World');
};
