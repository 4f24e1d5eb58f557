<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\Socket\Socket;

/**
 * What a worker does with an accepted connection. The server layer knows nothing of the protocol: HTTP
 * and the line protocol each implement this.
 */
interface ConnectionHandler
{
    /** Serves one connection until it ends. Called in a coroutine of its own; must close the socket. */
    public function handle(Socket $connection): void;

    /** Answers a connection the worker cannot take (over --max-connections, or unwatchable), then closes it. */
    public function refuse(Socket $connection, string $reason): void;

    /**
     * Graceful stop: finish what is in flight, end each connection at its next request boundary, and
     * close idle ones. Returns at once; the worker waits for the connections to end.
     */
    public function drain(): void;

    /** @return array{connections: int, requests: int} */
    public function stats(): array;
}
