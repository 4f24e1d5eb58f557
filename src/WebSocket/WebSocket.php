<?php

declare(strict_types=1);

namespace Weft\WebSocket;

use Weft\Http\Message\HeaderBlock;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;

/**
 * One WebSocket connection as the application sees it, inside its handler's coroutine:
 *
 *     return static fn (Request $request): Response => WebSocket::upgrade($request, static function (WebSocket $ws): void {
 *         while (($message = $ws->receive()) !== null) {
 *             $ws->send($message);
 *         }
 *     });
 *
 * receive() suspends the handler's coroutine until a message arrives and returns null once the
 * connection is closing or closed. send() never waits (see sendFrame()); close() starts the closing
 * handshake. Pings are answered by the server; the handler returning closes the connection (1000).
 */
final class WebSocket
{
    /** Unique within the worker: a key for the application's own tables (a chat room's members). */
    public readonly int $id;

    /** @internal built by the upgrade */
    public function __construct(private readonly WebSocketSession $session, public readonly Request $request)
    {
        $this->id = $session->connection->id;
    }

    /**
     * Answers a WebSocket opening handshake: a 101 that runs $handler(WebSocket) in a coroutine of its
     * own once the connection has switched (or, for a Handler, calls its methods as events arrive), or
     * the error the handshake deserves (400, 403, 405, 426). The server answers 503 instead of the 101
     * when the worker's open WebSockets hold their whole budget (--ws-memory, see Upgrade::COST_EVENT).
     *
     * @param (\Closure(WebSocket): void)|Handler $handler
     * @param WebSocketOptions|null $options null: the server's (--ws-* options)
     */
    public static function upgrade(Request $request, \Closure|Handler $handler, ?WebSocketOptions $options = null): Response
    {
        return Handshake::answer($request, $handler, $options);
    }

    /** Whether $request asks for a WebSocket (Upgrade: websocket), to route it to upgrade(). */
    public static function isUpgrade(Request $request): bool
    {
        return HeaderBlock::listHas($request->header('upgrade') ?? '', 'websocket');
    }

    /**
     * Sends one message to every connection given, encoding the frame once. Never waits for any of
     * them: a client too slow to keep up is closed with 1008 (see send()). Returns how many took it.
     *
     * @param iterable<WebSocket> $sockets
     */
    public static function broadcast(iterable $sockets, string|Message $message, bool $binary = false): int
    {
        if ($message instanceof Message) {
            $binary = $message->binary;
            $message = $message->data;
        }
        $frame = Frame::encode($binary ? Frame::BINARY : Frame::TEXT, $message);
        $sent = 0;
        foreach ($sockets as $socket) {
            if ($socket->session->sendFrame($frame)) {
                $sent++;
            }
        }
        return $sent;
    }

    /** The next message, or null once the connection is closing or closed. */
    public function receive(): ?Message
    {
        return $this->session->receive();
    }

    /**
     * Queues a text message (binary with $binary, or a Message's own type) and returns at once; false
     * when the connection is no longer open. A client that has more than 1 MB (Connection::HIGH_WATER)
     * of earlier output unread is closed with 1008 instead: broadcasts never wait for a slow client and
     * a worker's memory stays bounded. A producer that sends a lot to one client calls flush() between
     * sends to wait for the client instead.
     */
    public function send(string|Message $message, bool $binary = false): bool
    {
        if ($message instanceof Message) {
            return $this->session->sendFrame(Frame::encode($message->binary ? Frame::BINARY : Frame::TEXT, $message->data));
        }
        return $this->session->sendFrame(Frame::encode($binary ? Frame::BINARY : Frame::TEXT, $message));
    }

    public function sendBinary(string $data): bool
    {
        return $this->session->sendFrame(Frame::encode(Frame::BINARY, $data));
    }

    /** Sends a ping (the peer answers with a pong, which the server absorbs). */
    public function ping(string $payload = ''): bool
    {
        if (\strlen($payload) > 125) {
            throw new \InvalidArgumentException('A ping payload is at most 125 bytes');
        }
        return $this->session->sendFrame(Frame::encode(Frame::PING, $payload));
    }

    /**
     * Waits (this coroutine only) until less than 1 MB of output is queued for this client and, while
     * anything is, the worker's output is below its budget's gate (Weft\Server\OutputBudget).
     *
     * @throws \Weft\Socket\ConnectionClosed when the connection ends meanwhile
     */
    public function flush(): void
    {
        $this->session->connection->waitForRoom();
    }

    /** Starts the closing handshake; receive() returns null from now on. */
    public function close(int $code = CloseCode::NORMAL, string $reason = ''): void
    {
        $this->session->close($code, $reason);
    }

    public function isOpen(): bool
    {
        return $this->session->isOpen();
    }

    /** The close code once closing: sent by us, or received (1005: none given; 1006: TCP ended without a close frame). */
    public function closeCode(): ?int
    {
        return $this->session->closeCode;
    }

    public function closeReason(): string
    {
        return $this->session->closeReason;
    }

    /** The subprotocol agreed in the handshake, if any. */
    public function protocol(): ?string
    {
        return $this->session->protocol;
    }

    public function remoteAddress(): ?string
    {
        return $this->session->connection->remoteAddress();
    }
}
