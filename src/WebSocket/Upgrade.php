<?php

declare(strict_types=1);

namespace Weft\WebSocket;

use Weft\Coroutine\Scheduler;
use Weft\Coroutine\TooManyCoroutines;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Message\Upgrade as HttpUpgrade;
use Weft\Server\Connection;
use Weft\Server\ReceiveBudget;

/**
 * The switch itself, once the HTTP session hands the connection over: write the 101, make a
 * WebSocketSession the connection's session (with its own timers), and start the handler in a
 * coroutine of its own.
 *
 * That coroutine lives outside the HTTP request's accounting: the request (the handshake) is complete
 * once the 101 is out, so a long-lived WebSocket neither counts against --max-request-time nor holds
 * sync mode's one request slot, and `status` does not list it as a running request.
 *
 * @internal built by Handshake
 */
final class Upgrade implements HttpUpgrade
{
    /** @param (\Closure(WebSocket): void)|Handler $handler */
    public function __construct(
        private readonly Request $request,
        private readonly \Closure|Handler $handler,
        private readonly ?WebSocketOptions $options,
        private readonly ?string $protocol,
    ) {
    }

    public function switchProtocols(Connection $connection, Response $response, string $buffered, array $defaults): void
    {
        $options = $this->options ?? ($defaults['websocket'] ?? null);
        $options = $options instanceof WebSocketOptions ? $options : new WebSocketOptions();
        $connection->write(self::head($response));
        $budget = $defaults['budget'] ?? null;
        $session = new WebSocketSession($connection, $options, $this->protocol, $budget instanceof ReceiveBudget ? $budget : null);
        $connection->upgrade($session, $options->timeouts());
        $socket = new WebSocket($session, $this->request);
        $handler = $this->handler;
        if ($handler instanceof Handler) {
            $session->attach($handler, $socket);
        } else {
            self::start($handler, $socket);
        }
        if ($buffered !== '') {
            $session->received($buffered);
        }
        $connection->flush();
    }

    /** The closure form: one coroutine for the connection's whole life. @param \Closure(WebSocket): void $handler */
    private static function start(\Closure $handler, WebSocket $socket): void
    {
        try {
            Scheduler::get()->spawn(static function () use ($handler, $socket): void {
                try {
                    $handler($socket);
                } catch (\Throwable $e) {
                    $socket->close(CloseCode::INTERNAL_ERROR, 'internal error');
                    throw $e; // logged by the worker as an unhandled coroutine failure, with its trace
                }
                $socket->close();
            });
        } catch (TooManyCoroutines) {
            $socket->close(CloseCode::TRY_AGAIN_LATER, 'too many connections');
        }
    }

    /** The 101's head; the application's layers may have added fields (Set-Cookie), which go out as given. */
    private static function head(Response $response): string
    {
        $head = "HTTP/1.1 101 Switching Protocols\r\n";
        foreach ($response->headers() as $name => $values) {
            foreach (\is_array($values) ? $values : [$values] as $value) {
                $value = (string) $value;
                if (\preg_match('/[\x00\r\n]/', $name . $value) === 1 || \preg_match('/[^!#$%&\'*+.^_`|~0-9A-Za-z-]/', (string) $name) === 1) {
                    continue; // never let a field break the head
                }
                $head .= "$name: $value\r\n";
            }
        }
        return $head . "\r\n";
    }
}
