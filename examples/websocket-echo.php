<?php // examples/websocket-echo.php: bin/weft serve examples/websocket-echo.php, then connect to ws://127.0.0.1:8080/

declare(strict_types=1);

// The event form of a handler (Weft\WebSocket\Handler): nothing waits per connection between messages,
// so an idle connection costs about what an idle HTTP keep-alive connection does (4 KB, not the 23 KB
// of a coroutine waiting in $ws->receive(): see docs/static-and-websocket.md, "Memory").

use Weft\Http\Message\{Request, Response};
use Weft\WebSocket\{Handler, Message, WebSocket};

$echo = new class () implements Handler {
    public function onOpen(WebSocket $ws): void
    {
    }

    public function onMessage(WebSocket $ws, Message $message): void
    {
        $ws->send($message); // text stays text, binary stays binary
    }

    public function onClose(WebSocket $ws): void
    {
    }
};

return static fn (Request $request): Response => WebSocket::upgrade($request, $echo);
