<?php

// The same upstream call with file_get_contents() (PHP's http:// stream wrapper), as plain PHP code
// has it. Nothing here knows about Weft: in coroutine mode with the extension's stream hook, the wait
// suspends only this request; with `--hooks none`, in sync mode, or without the extension, it blocks
// the worker.
//
//   php examples/delay-server.php --port 9501 --delay 1 &
//   bin/weft serve examples/upstream-streams.php --workers 2
//   UPSTREAM_URL   the upstream to call (default http://127.0.0.1:9501/)

declare(strict_types=1);

use Weft\Http\Message\Request;
use Weft\Http\Message\Response;

return static function (Request $request): Response {
    $context = \stream_context_create(['http' => ['timeout' => 60, 'ignore_errors' => true]]);
    $body = @\file_get_contents(\getenv('UPSTREAM_URL') ?: 'http://127.0.0.1:9501/', false, $context);
    if ($body === false) {
        return new Response(502, ['Content-Type' => 'text/plain'], 'upstream: ' . (\error_get_last()['message'] ?? 'failed') . "\n");
    }
    // $http_response_header is set by the http:// wrapper in this scope.
    $ok = \str_contains($http_response_header[0] ?? '', ' 200 ');
    return new Response($ok ? 200 : 502, ['Content-Type' => 'text/plain'], $body);
};
