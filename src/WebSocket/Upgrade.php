<?php

declare(strict_types=1);

namespace Weft\WebSocket;

use Weft\Coroutine\Scheduler;
use Weft\Coroutine\TooManyCoroutines;
use Weft\Http\Message\HeaderField;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Server\ProtocolSwitch;
use Weft\Server\Connection;
use Weft\Server\ConnectionBudget;
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
final class Upgrade implements ProtocolSwitch
{
    /**
     * What an idle WebSocket of the event form holds, charged against the worker's budget (--ws-memory):
     * its connection (stream, watchers, timer), session, WebSocket and handshake request. Measured: 4.1 KB
     * with a minimal handshake, 4.6 KB with Python websockets' (its request's headers are kept for
     * $ws->request); an idle HTTP keep-alive connection holds 4.0 KB. WebSocketMemoryTest checks it.
     */
    public const COST_EVENT = 5120;
    /**
     * The closure form adds the coroutine that waits in receive() for the connection's whole life: a
     * Fiber, whose VM stack alone is 16 KB of PHP memory (a size fixed by PHP), and its Coroutine.
     * Measured: 23.1 KB in all (23.4 KB once messages have come and gone). Its C stack, resident
     * memory outside PHP's accounting, comes on top.
     */
    public const COST_CLOSURE = 25600;

    /** @param (\Closure(WebSocket): void)|Handler $handler */
    public function __construct(
        private readonly Request $request,
        private readonly \Closure|Handler $handler,
        private readonly ?WebSocketOptions $options,
        private readonly ?string $protocol,
    ) {
    }

    public function cost(): int
    {
        return $this->handler instanceof Handler ? self::COST_EVENT : self::COST_CLOSURE;
    }

    public function switchProtocols(Connection $connection, Response $response, string $buffered, array $defaults): void
    {
        $options = $this->options ?? ($defaults['websocket'] ?? null);
        $options = $options instanceof WebSocketOptions ? $options : new WebSocketOptions();
        $connection->write(self::head($response));
        $budget = $defaults['budget'] ?? null;
        $upgraded = $defaults['upgraded'] ?? null;
        $session = new WebSocketSession(
            $connection,
            $options,
            $this->protocol,
            $budget instanceof ReceiveBudget ? $budget : null,
            $upgraded instanceof ConnectionBudget ? $upgraded : null,
            $this->cost(),
        );
        $connection->upgrade($session, $options->timeouts());
        $socket = new WebSocket($session, $this->request);
        $handler = $this->handler;
        if ($handler instanceof Handler) {
            $session->attach($handler, $socket);
        } else {
            self::start($handler, $socket);
        }
        if ($connection->isClosed()) {
            // The client left while the application answered: the core will not report it again.
            $session->closed();
            return;
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
            // A static method and arguments rather than a closure over them: no closure (and its table
            // of captured variables) per connection.
            Scheduler::get()->spawn(self::run(...), [$handler, $socket]);
        } catch (TooManyCoroutines) {
            $socket->close(CloseCode::TRY_AGAIN_LATER, 'too many connections');
        }
    }

    /** @param \Closure(WebSocket): void $handler */
    private static function run(\Closure $handler, WebSocket $socket): void
    {
        try {
            $handler($socket);
        } catch (\Throwable $e) {
            $socket->close(CloseCode::INTERNAL_ERROR, 'internal error');
            throw $e; // logged by the worker as an unhandled coroutine failure, with its trace
        }
        $socket->close();
    }

    /**
     * The 101's head; the application's layers may have added fields (Set-Cookie), which go out as given.
     * HttpSession has checked them (HeaderField) and answered 500 rather than switch with a bad one.
     */
    private static function head(Response $response): string
    {
        $head = "HTTP/1.1 101 Switching Protocols\r\n";
        foreach ($response->headers() as $name => $values) {
            foreach ($values as $value) {
                $head .= HeaderField::line((string) $name, (string) $value) . "\r\n";
            }
        }
        return $head . "\r\n";
    }
}
