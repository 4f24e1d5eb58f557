<?php

declare(strict_types=1);

namespace Weft\Socket;

use Weft\Coroutine\Coroutine;

use function Weft\go;

/**
 * The accept loop of Weft's side servers (the metrics endpoint, the control sockets, the delay server):
 * accepts in a coroutine until the listener is closed, runs each connection's handler in a coroutine of
 * its own and closes the connection when the handler returns. Beyond $maxConnections open at once, a
 * new connection is closed at once: a side server must not let a crowd of clients take its process.
 *
 * (A worker's own connections are not served this way: Server\Connections drives them from loop
 * callbacks, with a coroutine only while a request is in the application.)
 */
final class Acceptor
{
    /**
     * Accepts in a coroutine of its own and returns it at once.
     *
     * @param \Closure(Socket): void $handle its exceptions are its own: one that escapes is logged as any
     *        coroutine's, and the loop goes on
     */
    public static function start(Listener $listener, \Closure $handle, int $maxConnections = \PHP_INT_MAX): Coroutine
    {
        return go(static fn () => self::run($listener, $handle, $maxConnections));
    }

    /**
     * Accepts in the calling coroutine until the listener is closed (or this coroutine cancelled).
     *
     * @param \Closure(Socket): void $handle
     */
    public static function run(Listener $listener, \Closure $handle, int $maxConnections = \PHP_INT_MAX): void
    {
        $open = 0;
        while (true) {
            try {
                $client = $listener->accept();
            } catch (\Throwable) {
                return; // the listener was closed, or this coroutine cancelled: the server stops
            }
            if ($open >= $maxConnections) {
                $client->close();
                continue;
            }
            $open++;
            go(static function () use ($client, $handle, &$open): void {
                try {
                    $handle($client);
                } finally {
                    $open--;
                    $client->close();
                }
            });
        }
    }
}
