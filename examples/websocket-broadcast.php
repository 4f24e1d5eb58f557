<?php // examples/websocket-broadcast.php: bin/weft serve examples/websocket-broadcast.php --workers 1 --loop epoll

declare(strict_types=1);

// A minimal fan-out: every message any client sends goes to every client of this worker (the sender
// included). `bin/weft bench websocket` times one such message reaching 10,000 clients.

use Weft\Http\Message\{Request, Response};
use Weft\WebSocket\WebSocket;

$clients = [];

// A closure with `use (&$clients)` (an arrow function would capture a copy per request).
return static function (Request $request) use (&$clients): Response {
    return WebSocket::upgrade($request, static function (WebSocket $ws) use (&$clients): void {
        $clients[$ws->id] = $ws;
        try {
            while (($message = $ws->receive()) !== null) {
                WebSocket::broadcast($clients, $message);
            }
        } finally {
            unset($clients[$ws->id]);
        }
    });
};
