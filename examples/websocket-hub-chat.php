<?php // examples/websocket-hub-chat.php: WEFT_HUB_REDIS=redis://127.0.0.1:6379 bin/weft serve examples/websocket-hub-chat.php --workers 4

declare(strict_types=1);

// Chat rooms that span every worker of every instance started with the same WEFT_HUB_REDIS (without it:
// this worker only). Connect to ws://HOST:PORT/?room=lobby&name=alice; a text message goes to everyone
// in the room, wherever they are connected; "/who" answers how many are in the room across instances.
// GET /hub/stats shows this worker's hub counters (what did not reach Redis, what was missed).

use Weft\Http\Message\{Request, Response};
use Weft\WebSocket\{Hub, HubUnavailable, WebSocket};

$redis = \getenv('WEFT_HUB_REDIS');
$prefix = \getenv('WEFT_HUB_PREFIX') ?: 'weft:chat:';
// Loaded by each worker after fork: one hub per worker, for its whole life.
$hub = $redis ? Hub::redis($redis, $prefix) : new Hub();

$here = static function (Hub $hub, string $room): string {
    try {
        return $hub->presence($room) . ' here';
    } catch (HubUnavailable) {
        return $hub->localPresence($room) . ' here on this server; the others cannot be counted now';
    }
};

return static function (Request $request) use ($hub, $here): Response {
    if (!WebSocket::isUpgrade($request)) {
        if ($request->path() === '/hub/stats') {
            return Response::json($hub->stats());
        }
        return Response::text("Connect with a WebSocket client to ws://{$request->header('host')}/?room=lobby&name=you\n");
    }
    $name = \substr((string) ($request->queryParam('name') ?? 'guest'), 0, 32);
    $room = \substr((string) ($request->queryParam('room') ?? 'lobby'), 0, 64) ?: 'lobby';
    return WebSocket::upgrade($request, static function (WebSocket $ws) use ($hub, $here, $name, $room): void {
        $hub->join($ws, $room);
        try {
            $hub->publish($room, "* $name joined $room ({$here($hub, $room)})");
            while (($message = $ws->receive()) !== null) {
                if (!$message->isText()) {
                    continue;
                }
                if ($message->data === '/who') {
                    $ws->send("* {$here($hub, $room)}");
                    continue;
                }
                $published = $hub->publish($room, "$name: {$message->data}");
                if (!$published->sent) {
                    // Delivered here, not beyond: say so rather than let the sender believe all saw it.
                    $ws->send("* only this server got that: {$published->error?->getMessage()}");
                }
            }
        } finally {
            $hub->leave($ws);
            $hub->publish($room, "* $name left");
        }
    });
};
