<?php // examples/websocket-broadcast.php: bin/weft serve examples/websocket-broadcast.php --workers 1 --loop epoll

declare(strict_types=1);

// A minimal fan-out: every message any client sends goes to every client of this worker (the sender
// included). `bin/weft bench websocket` times one such message reaching 10,000 clients.
//
// It uses the event form of a handler (Weft\WebSocket\Handler): no coroutine waits per connection
// between messages, which is what lets one worker hold tens of thousands of connections.

use Weft\Http\Message\{Request, Response};
use Weft\WebSocket\{Handler, Message, WebSocket};

$feed = new class () implements Handler {
    /** @var array<int, WebSocket> */
    private array $clients = [];

    public function onOpen(WebSocket $ws): void
    {
        $this->clients[$ws->id] = $ws;
    }

    public function onMessage(WebSocket $ws, Message $message): void
    {
        WebSocket::broadcast($this->clients, $message);
    }

    public function onClose(WebSocket $ws): void
    {
        unset($this->clients[$ws->id]);
    }
};

return static fn (Request $request): Response => WebSocket::upgrade($request, $feed);
