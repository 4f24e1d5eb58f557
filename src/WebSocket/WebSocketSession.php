<?php

declare(strict_types=1);

namespace Weft\WebSocket;

use Weft\Coroutine\Coroutine;
use Weft\Coroutine\Scheduler;
use Weft\Server\Connection;
use Weft\Server\ConnectionBudget;
use Weft\Server\ReceiveBudget;
use Weft\Server\Session;

/**
 * A connection after its upgrade: the connection core still reads it from a loop callback, this
 * session decodes the frames, answers pings and closes at once, and hands complete messages to the
 * application's one coroutine (WebSocket::receive()). No Fiber waits on the socket: the application's
 * coroutine waits only when it asks for a message that has not arrived.
 *
 * Timers (the core's, by phase): STREAM_OPEN while open (the idle timer, restarted by every event in
 * either direction), STREAM_CLOSING once our close frame is out (the close timeout, from that moment),
 * BUSY while the application has READ_AHEAD bytes of messages it has not taken (reading pauses:
 * backpressure on the peer, and no timer, since the wait is ours).
 *
 * @internal
 */
final class WebSocketSession implements Session
{
    /** Messages the application has not received yet, in bytes, beyond which reading pauses. */
    private const READ_AHEAD = 262144;
    private const OPEN = 0;
    /** Our close frame is out; waiting for the peer's. */
    private const CLOSING = 1;
    private const CLOSED = 2;

    private int $state = self::OPEN;
    /** @var list<Message> */
    private array $queue = [];
    private int $queued = 0;
    private ?Coroutine $waiter = null;
    /** Inside received(): answers are written now and flushed once at its end. */
    private bool $receiving = false;
    private bool $goingAway = false;
    /** A close frame or a protocol violation came in: our close frame is on its way, nothing more is read. */
    private bool $ending = false;
    /**
     * Frames being decoded; null while nothing of a frame is held, which is most of an idle
     * connection's life: its memory is what an idle connection costs (see Upgrade::COST_EVENT).
     */
    private ?Decoder $decoder = null;
    private readonly Scheduler $scheduler;
    /** Undoes a receive() wait when its coroutine is cancelled; one closure for every wait, made at the first. */
    private ?\Closure $cancelReceive = null;
    /** The event form: messages go to its methods, in a pooled coroutine while there is work. */
    private ?Handler $handler = null;
    private ?WebSocket $socket = null;
    private bool $running = false;
    private bool $opened = false;
    private bool $closeReported = false;
    public ?int $closeCode = null;
    public string $closeReason = '';

    /** This connection's share of the worker's ReceiveBudget: the bytes its decoder holds. */
    private int $held = 0;

    public function __construct(
        public readonly Connection $connection,
        public readonly WebSocketOptions $options,
        public readonly ?string $protocol,
        /** The worker's budget of input held (shared with HTTP); null: none (a session built on its own). */
        private readonly ?ReceiveBudget $budget = null,
        /** The worker's budget of open upgraded connections, charged $cost for this one until it closes. */
        private ?ConnectionBudget $upgraded = null,
        private readonly int $cost = 0,
    ) {
        $this->scheduler = Scheduler::get();
    }

    public function received(string $bytes): void
    {
        if ($this->state === self::CLOSED || $this->ending) {
            return;
        }
        $decoder = $this->decoder ??= new Decoder($this->options->maxMessage);
        $decoder->push($bytes);
        $this->receiving = true;
        try {
            while (($frame = $decoder->next()) !== null) {
                [$opcode, $payload] = $frame;
                if ($opcode <= Frame::BINARY) {
                    if ($this->state === self::OPEN) {
                        $this->deliver(new Message($payload, $opcode === Frame::BINARY));
                    }
                } elseif ($opcode === Frame::PING) {
                    if ($this->state === self::OPEN) {
                        $this->connection->write(Frame::encode(Frame::PONG, $payload));
                    }
                } elseif ($opcode === Frame::CLOSE) {
                    if ($this->state === self::OPEN) {
                        // Known now, whatever happens to TCP before the answer goes out.
                        $this->closeCode = $payload === '' ? CloseCode::NO_STATUS : (\ord($payload[0]) << 8) | \ord($payload[1]);
                        $this->closeReason = (string) \substr($payload, 2);
                        $this->endAfterDelivered(fn () => $this->peerClosed($payload));
                    } else {
                        $this->peerClosed($payload);
                    }
                    break;
                }
                if ($this->state === self::CLOSED) {
                    break;
                }
            }
        } catch (ProtocolError $e) {
            if ($this->state === self::OPEN) {
                $this->endAfterDelivered(fn () => $this->fail($e->closeCode, $e->getMessage()));
            } else {
                $this->fail($e->closeCode, $e->getMessage());
            }
        } finally {
            $this->receiving = false;
        }
        if ($this->budget !== null && $this->state !== self::CLOSED) {
            $this->account($decoder);
        }
        if ($this->decoder === $decoder && $decoder->isEmpty()) {
            $this->decoder = null; // made again by the next read
        }
        $this->connection->flush();
    }

    /**
     * Brings this connection's share of the worker's budget up to date. A worker over its budget
     * (thousands of connections each in the middle of a large message) closes the connection that is
     * receiving now with 1013, try again later, rather than grow until its memory limit ends every
     * connection on it; connections holding less than ReceiveBudget::REFUSE_FROM are left alone.
     */
    private function account(Decoder $decoder): void
    {
        \assert($this->budget !== null);
        $held = $decoder->heldBytes();
        if (!$this->budget->update($this->held, $held)) {
            $this->held = $held;
            return;
        }
        $this->budget->update($held, 0);
        $this->held = 0;
        $total = $this->budget->held;
        $count = $this->budget->refused();
        if ($count !== null) {
            \Weft\logger()->warning('WebSocket #{id}: closed with 1013: the worker holds {held} bytes of input being received, over its budget of {budget} (half of --memory-limit); {count} refused since the last such line', [
                'id' => $this->connection->id, 'held' => $total + $held, 'budget' => $this->budget->limit, 'count' => $count,
            ]);
        }
        $decoder->discard(); // freed now, not once the close frame has reached a peer that may never read
        $this->ending = true;
        $this->fail(CloseCode::TRY_AGAIN_LATER, 'the server is short of memory for messages');
    }

    /**
     * A close frame or a protocol violation ends the connection, but the messages that came before
     * it in the same read are good ones: the application gets to answer them first (an echo of a
     * message followed at once by the client's close, or by a bad frame, goes out before our close
     * frame, as RFC 6455 5.5.1 allows and Autobahn's cases 7.1.1 and 3.x check). deliver() has
     * resumed the application's coroutine or queued it, and the scheduler runs queued coroutines
     * from a deferred callback queued before this one. Nothing more is read or decoded meanwhile.
     */
    private function endAfterDelivered(\Closure $end): void
    {
        $this->ending = true;
        $this->scheduler->driver->defer(function () use ($end): void {
            if ($this->state === self::CLOSED) {
                return; // TCP ended meanwhile
            }
            $end();
            $this->connection->flush();
        });
    }

    public function ended(): void
    {
        // TCP ended without a close frame (RFC 6455 7.1.5: 1006).
        $this->closeCode ??= CloseCode::ABNORMAL;
        $this->state = self::CLOSED;
        $this->connection->closeAfterFlush();
        $this->wake();
    }

    public function phase(): int
    {
        if ($this->state === self::OPEN && !$this->goingAway && $this->connection->isDraining()) {
            // The worker stops or reloads: say goodbye (1001) from the loop, not from inside the core's update().
            $this->goingAway = true;
            $this->scheduler->driver->defer(function (): void {
                $this->close(CloseCode::GOING_AWAY, 'server going away');
            });
        }
        if ($this->state === self::CLOSING) {
            return self::STREAM_CLOSING;
        }
        if ($this->state === self::CLOSED || $this->queued >= self::READ_AHEAD) {
            return self::BUSY;
        }
        return self::STREAM_OPEN;
    }

    public function wantsInput(): bool
    {
        return $this->state !== self::CLOSED && !$this->ending && $this->queued < self::READ_AHEAD;
    }

    public function timedOut(): ?string
    {
        if ($this->state !== self::OPEN) {
            return null; // no close frame from the peer in time: just end TCP
        }
        $this->state = self::CLOSED;
        $this->closeCode = CloseCode::GOING_AWAY;
        $this->closeReason = 'idle timeout';
        $this->wake();
        return Frame::close(CloseCode::GOING_AWAY, 'idle timeout');
    }

    public function resume(): void
    {
    }

    public function closed(): void
    {
        if ($this->upgraded !== null) {
            $this->upgraded->release($this->cost);
            $this->upgraded = null;
        }
        if ($this->budget !== null && $this->held !== 0) {
            $this->budget->update($this->held, 0);
            $this->held = 0;
        }
        $this->closeCode ??= CloseCode::ABNORMAL;
        $this->state = self::CLOSED;
        $this->wake();
    }

    public function serve(mixed $request): void
    {
        throw new WebSocketError('A WebSocket session dispatches nothing');
    }

    public function describe(mixed $request): string
    {
        return 'websocket';
    }

    public function isOpen(): bool
    {
        return $this->state === self::OPEN;
    }

    /** @see WebSocket::receive() */
    public function receive(): ?Message
    {
        if ($this->handler !== null) {
            throw new WebSocketError('This WebSocket hands its messages to its Handler; receive() is for the closure form');
        }
        if ($this->queue !== []) {
            return $this->takeQueued();
        }
        if ($this->state !== self::OPEN) {
            return null;
        }
        if ($this->waiter !== null) {
            throw \Weft\Coroutine\ConcurrentUse::stream('read', $this->waiter, $this->scheduler->current);
        }
        $this->waiter = $this->scheduler->self();
        return $this->scheduler->await($this->cancelReceive ??= function (): void {
            $this->waiter = null;
        });
    }

    private function takeQueued(): Message
    {
        $message = \array_shift($this->queue);
        if ($this->queue === []) {
            // PHP's shared empty array: the emptied one keeps its buckets, held by every idle connection.
            $this->queue = [];
        }
        $before = $this->queued;
        $this->queued -= \strlen($message->data);
        if ($before >= self::READ_AHEAD && $this->queued < self::READ_AHEAD) {
            $this->connection->update(); // read again
        }
        return $message;
    }

    /**
     * Queues an encoded frame; never waits. A peer with more than Connection::HIGH_WATER bytes unread
     * is too slow for what is sent to it: rather than buffer without bound (or silently lose messages
     * from the middle of its stream), it is closed with 1008 once what is queued has gone out.
     */
    public function sendFrame(string $frame): bool
    {
        if ($this->state !== self::OPEN) {
            return false;
        }
        $connection = $this->connection;
        if ($this->receiving && $connection->congested()) {
            $connection->flush(); // answers batched within one read are ours to send, not the peer's backlog
        }
        if ($connection->congested()) {
            $this->state = self::CLOSED;
            $this->closeCode = CloseCode::POLICY_VIOLATION;
            $this->closeReason = 'too slow: output over the bound';
            $connection->write(Frame::close(CloseCode::POLICY_VIOLATION, 'too slow'));
            $connection->closeAfterFlush();
            $connection->flush();
            $this->wake();
            return false;
        }
        $connection->write($frame);
        if (!$this->receiving) {
            $connection->flush();
        }
        return true;
    }

    /** @see WebSocket::close() */
    public function close(int $code, string $reason): void
    {
        if ($this->state !== self::OPEN) {
            return;
        }
        $frame = Frame::close($code, $reason);
        $this->state = self::CLOSING;
        $this->closeCode = $code;
        $this->closeReason = $reason;
        $this->queue = [];
        $this->queued = 0;
        $this->connection->write($frame);
        if (!$this->receiving) {
            $this->connection->flush();
        }
        $this->wake();
    }

    /** Protocol violation: our close frame with its code, then the end of the connection. */
    private function fail(int $code, string $reason): void
    {
        if ($this->state === self::CLOSED) {
            return;
        }
        if ($this->state === self::OPEN) {
            $this->connection->write(Frame::close($code, \substr($reason, 0, 123)));
            $this->closeCode = $code;
            $this->closeReason = $reason;
        }
        $this->state = self::CLOSED;
        $this->queue = [];
        $this->queued = 0;
        $this->connection->closeAfterFlush();
        $this->wake();
    }

    private function peerClosed(string $payload): void
    {
        if ($this->state === self::OPEN) {
            // Echo the code (RFC 6455 5.5.1), then close TCP: the server closes first.
            $code = $payload === '' ? CloseCode::NO_STATUS : (\ord($payload[0]) << 8) | \ord($payload[1]);
            $this->connection->write($payload === '' ? Frame::encode(Frame::CLOSE, '') : Frame::close($code));
            $this->closeCode = $code;
            $this->closeReason = (string) \substr($payload, 2);
        }
        $this->state = self::CLOSED;
        $this->connection->closeAfterFlush();
        $this->wake();
    }

    private function deliver(Message $message): void
    {
        if ($this->handler !== null) {
            $this->queue[] = $message;
            $this->queued += \strlen($message->data);
            $this->runHandler();
            return;
        }
        if ($this->waiter !== null) {
            $waiter = $this->waiter;
            $this->waiter = null;
            $this->scheduler->resume($waiter, $message);
            return;
        }
        $this->queue[] = $message;
        $this->queued += \strlen($message->data);
    }

    /**
     * Starts the event handler's coroutine unless it runs already: onOpen first, then every queued
     * message in order, then onClose once the connection has ended. The coroutine ends when there is
     * nothing left to do, so an idle connection holds no Fiber.
     */
    public function attach(Handler $handler, WebSocket $socket): void
    {
        $this->handler = $handler;
        $this->socket = $socket;
        $this->runHandler();
    }

    private function runHandler(): void
    {
        if ($this->running) {
            return;
        }
        $this->running = true;
        try {
            $this->scheduler->spawn($this->handlerLoop(...));
        } catch (\Weft\Coroutine\TooManyCoroutines) {
            $this->running = false;
            $this->fail(CloseCode::TRY_AGAIN_LATER, 'too many connections');
        }
    }

    private function handlerLoop(): void
    {
        $handler = $this->handler;
        $socket = $this->socket;
        try {
            while (true) {
                if (!$this->opened) {
                    $this->opened = true;
                    $handler->onOpen($socket);
                } elseif ($this->queue !== []) {
                    $message = $this->takeQueued();
                    if ($this->state === self::OPEN) {
                        $handler->onMessage($socket, $message);
                    }
                } elseif ($this->state === self::CLOSED && !$this->closeReported) {
                    $this->closeReported = true;
                    $handler->onClose($socket);
                } else {
                    break;
                }
            }
        } catch (\Throwable $e) {
            $this->close(CloseCode::INTERNAL_ERROR, 'internal error');
            throw $e; // logged by the worker as an unhandled coroutine failure
        } finally {
            $this->running = false;
        }
    }

    /** No more messages: a coroutine waiting in receive() gets null. */
    private function wake(): void
    {
        if ($this->handler !== null) {
            if ($this->state === self::CLOSED && !$this->closeReported) {
                $this->runHandler();
            }
            return;
        }
        if ($this->waiter !== null && $this->queue === []) {
            $waiter = $this->waiter;
            $this->waiter = null;
            if ($waiter->isWaiting()) {
                $this->scheduler->resume($waiter, null);
            }
        }
    }
}
