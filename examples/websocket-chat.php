<?php // examples/websocket-chat.php: bin/weft serve examples/websocket-chat.php --workers 1

declare(strict_types=1);

// A chat room: every text message goes to everyone connected to this worker. Rooms are per worker;
// for rooms across workers and servers, see examples/websocket-hub-chat.php (Weft\WebSocket\Hub).

use Weft\Http\Message\{Request, Response};
use Weft\WebSocket\WebSocket;

/** @var array<int, WebSocket> $members lives as long as the worker */
$members = [];

return static function (Request $request) use (&$members): Response {
    if (!WebSocket::isUpgrade($request)) {
        return Response::text("Connect with a WebSocket client to ws://{$request->header('host')}/\n");
    }
    $name = \substr((string) ($request->queryParam('name') ?? 'guest'), 0, 32);
    return WebSocket::upgrade($request, static function (WebSocket $ws) use (&$members, $name): void {
        $members[$ws->id] = $ws;
        WebSocket::broadcast($members, "* $name joined (" . \count($members) . ' here)');
        try {
            while (($message = $ws->receive()) !== null) {
                if ($message->isText()) {
                    WebSocket::broadcast($members, "$name: {$message->data}"); // never waits for a slow member
                }
            }
        } finally {
            unset($members[$ws->id]);
            WebSocket::broadcast($members, "* $name left");
        }
    });
};
