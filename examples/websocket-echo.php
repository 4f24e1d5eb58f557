<?php // examples/websocket-echo.php: bin/weft serve examples/websocket-echo.php, then connect to ws://127.0.0.1:8080/

declare(strict_types=1);

use Weft\Http\Message\{Request, Response};
use Weft\WebSocket\WebSocket;

return static fn (Request $request): Response => WebSocket::upgrade($request, static function (WebSocket $ws): void {
    while (($message = $ws->receive()) !== null) {
        $ws->send($message); // text stays text, binary stays binary
    }
});
