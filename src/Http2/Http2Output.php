<?php

declare(strict_types=1);

namespace Weft\Http2;

use Weft\Coroutine\Scheduler;
use Weft\Http2\Hpack\Encoder;
use Weft\Loop\Loop;
use Weft\Server\Connection;

/**
 * What one HTTP/2 connection sends, as far as the peer lets it (RFC 9113 §5.2, §6.9): header blocks,
 * HPACK-encoded at the moment they are written (the encoder's dynamic table follows the order of the
 * blocks on the wire), and each stream's DATA within both flow-control windows, the connection's and
 * the stream's. What the windows hold back waits in its stream; its producer waits with it and is woken
 * when room returns; a peer that keeps its windows shut is cut after --send-timeout.
 *
 * Http2Session owns the streams and their lifecycle, and reads; this owns the peer's connection window
 * and frame size, the streams with output queued, the producers to wake and the stall timer. Nothing
 * here writes but through the connection's one writer; the session flushes.
 *
 * @internal
 */
final class Http2Output
{
    /** A streamed producer waits while its stream holds more than this of DATA not yet sent. */
    public const STREAM_QUEUE = 65536;

    /** The peer's window for the connection: DATA we may still send on all streams together. */
    public int $window = Frame::DEFAULT_WINDOW;
    /** The peer's SETTINGS_MAX_FRAME_SIZE, as far as we use it. */
    public int $maxFrame = Frame::MIN_FRAME_SIZE;
    /** @var array<int, Http2Stream> streams with DATA (or only their end) queued */
    private array $sending = [];
    /** @var array<int, Http2Stream> producers to wake once the current callback has written */
    private array $wake = [];
    private ?string $stallTimer = null;
    /** Loop time of the last DATA the windows let out. */
    private float $lastProgress = 0.0;
    private readonly Encoder $encoder;

    /**
     * @param \Closure(Http2Stream): void $onSent a stream's queued output is all written (its end too, if queued)
     * @param \Closure(): void $onStall DATA waited $sendTimeout without the windows letting a byte out
     */
    public function __construct(
        private readonly Connection $connection,
        private readonly float $sendTimeout,
        private readonly \Closure $onSent,
        private readonly \Closure $onStall,
    ) {
        $this->encoder = new Encoder(4096);
    }

    /** The peer's SETTINGS_HEADER_TABLE_SIZE, as far as we use it. */
    public function setTableSize(int $size): void
    {
        $this->encoder->setMaxTableSize(\min($size, 4096));
    }

    /**
     * Writes a header block on its stream: one HEADERS frame, or HEADERS and CONTINUATION frames
     * written together (nothing may come between them, §4.3).
     *
     * @param list<array{0: string, 1: string}> $fields
     */
    public function headers(Http2Stream $stream, array $fields, bool $end): void
    {
        $this->headerBlock($stream, $this->encoder->encode($fields), $end);
    }

    /**
     * A whole response with a string body: its HEADERS and one DATA frame that ends the stream, in one
     * write, when both windows and the frame size admit the body and nothing of the stream waits; else
     * the head now and the body queued (pump() sends it). The common answer (a small body) thus skips
     * the queue, the pump and the stream's bookkeeping.
     *
     * @param list<array{0: string, 1: string}> $fields
     */
    public function respond(Http2Stream $stream, array $fields, string $body): void
    {
        $length = \strlen($body);
        $block = $this->encoder->encode($fields);
        if ($length > $this->window || $length > $stream->sendWindow || \max($length, \strlen($block)) > $this->maxFrame
            || isset($this->sending[$stream->id]) || $this->connection->outOfRoom()) {
            $this->headerBlock($stream, $block, false);
            $this->queue($stream, $body, true);
            return;
        }
        $stream->headersSent = true;
        $this->window -= $length;
        $stream->sendWindow -= $length;
        $stream->sent += $length;
        $stream->localClosed = true;
        $id = $stream->id;
        $this->connection->write(\pack('CnCCN', 0, \strlen($block), Frame::HEADERS, Frame::END_HEADERS, $id) . $block
            . \pack('CnCCN', $length >> 16, $length & 0xffff, Frame::DATA, Frame::END_STREAM, $id) . $body);
        $this->lastProgress = Loop::get()->now();
    }

    private function headerBlock(Http2Stream $stream, string $block, bool $end): void
    {
        $stream->headersSent = true;
        $flags = $end ? Frame::END_STREAM : 0;
        $max = $this->maxFrame;
        if (\strlen($block) <= $max) {
            $this->connection->write(Frame::frame(Frame::HEADERS, $flags | Frame::END_HEADERS, $stream->id, $block));
            return;
        }
        $frames = Frame::frame(Frame::HEADERS, $flags, $stream->id, \substr($block, 0, $max));
        for ($at = $max; $at < \strlen($block); $at += $max) {
            $last = $at + $max >= \strlen($block);
            $frames .= Frame::frame(Frame::CONTINUATION, $last ? Frame::END_HEADERS : 0, $stream->id, \substr($block, $at, $max));
        }
        $this->connection->write($frames);
    }

    /** Queues DATA on a stream ($end: END_STREAM, or its trailers, after it); pump() sends it. */
    public function queue(Http2Stream $stream, string $data, bool $end): void
    {
        if ($stream->outOffset > 0 && $stream->outOffset === \strlen($stream->out)) {
            $stream->out = '';
            $stream->outOffset = 0;
        }
        $stream->out = $stream->out === '' ? $data : $stream->out . $data;
        $stream->sent += \strlen($data);
        $stream->endAfterOut = $end;
        $this->sending[$stream->id] = $stream;
    }

    public function isSending(Http2Stream $stream): bool
    {
        return isset($this->sending[$stream->id]);
    }

    /** The stream was reset: what it has queued is dropped. */
    public function forget(Http2Stream $stream): void
    {
        unset($this->sending[$stream->id]);
    }

    /** Whether a producer on this stream must wait for the peer's window before it makes more. */
    public function isFull(Http2Stream $stream): bool
    {
        return $stream->queued() > self::STREAM_QUEUE;
    }

    /** Sends the queued DATA that both windows admit, stream by stream, and each end once its DATA is out. */
    public function pump(): void
    {
        if ($this->sending === [] || $this->connection->isClosed()) {
            return;
        }
        $connection = $this->connection;
        $blocked = false;
        foreach ($this->sending as $id => $stream) {
            if ($stream->reset) {
                unset($this->sending[$id]);
                continue;
            }
            while (true) {
                $left = \strlen($stream->out) - $stream->outOffset;
                if ($left === 0) {
                    if ($stream->endAfterOut && !$stream->localClosed) {
                        if ($stream->trailers !== null) {
                            $this->headers($stream, $stream->trailers, true);
                            $stream->trailers = null;
                        } else {
                            $connection->write(Frame::frame(Frame::DATA, Frame::END_STREAM, $id));
                        }
                        $stream->localClosed = true;
                    }
                    $this->sent($stream, $id);
                    break;
                }
                $room = \min($this->window, $stream->sendWindow, $this->maxFrame);
                if ($room <= 0) {
                    $blocked = true;
                    break;
                }
                if ($connection->outOfRoom()) {
                    return; // Session::resume() once the peer has read: the connection's own backpressure
                }
                $take = \min($left, $room);
                $chunk = $stream->outOffset === 0 && $take === \strlen($stream->out) ? $stream->out : \substr($stream->out, $stream->outOffset, $take);
                $stream->outOffset += $take;
                $this->window -= $take;
                $stream->sendWindow -= $take;
                $end = $take === $left && $stream->endAfterOut && $stream->trailers === null;
                $connection->write(Frame::frame(Frame::DATA, $end ? Frame::END_STREAM : 0, $id, $chunk));
                $this->lastProgress = Loop::get()->now();
                if ($end) {
                    $stream->localClosed = true;
                    $this->sent($stream, $id);
                    break;
                }
            }
            if ($stream->waiter !== null && $stream->queued() <= self::STREAM_QUEUE) {
                $this->wake[$id] = $stream;
            }
        }
        if ($blocked && $this->stallTimer === null) {
            $this->watchStall();
        }
    }

    /** Wakes the producers whose stream has room again: after the write, not inside pump(). */
    public function wakeProducers(): void
    {
        if ($this->wake === []) {
            return;
        }
        $wake = $this->wake;
        $this->wake = [];
        $scheduler = Scheduler::get();
        foreach ($wake as $stream) {
            $waiter = $stream->waiter;
            if ($waiter !== null && $waiter->isWaiting()) {
                $stream->waiter = null;
                $scheduler->resume($waiter);
            }
        }
    }

    /** The connection is gone: nothing more is sent or watched. */
    public function close(): void
    {
        $this->sending = [];
        if ($this->stallTimer !== null) {
            Loop::get()->cancel($this->stallTimer);
            $this->stallTimer = null;
        }
    }

    /** A stream's queued output is all written: it leaves the senders, and the session may forget it. */
    private function sent(Http2Stream $stream, int $id): void
    {
        $stream->out = '';
        $stream->outOffset = 0;
        unset($this->sending[$id]);
        ($this->onSent)($stream);
    }

    /**
     * A peer that keeps its window shut holds our DATA: after --send-timeout without a byte let out,
     * the connection is closed, as an HTTP/1.1 client that reads nothing is.
     */
    private function watchStall(): void
    {
        $loop = Loop::get();
        if ($this->lastProgress === 0.0) {
            $this->lastProgress = $loop->now();
        }
        $timeout = $this->sendTimeout;
        $this->stallTimer = $loop->delay(\max(0.001, $this->lastProgress + $timeout - $loop->now()), function () use ($loop, $timeout): void {
            $this->stallTimer = null;
            if ($this->connection->isClosed()) {
                return;
            }
            $waiting = false;
            foreach ($this->sending as $stream) {
                $waiting = $waiting || (!$stream->reset && $stream->queued() > 0);
            }
            if (!$waiting) {
                return;
            }
            if ($loop->now() - $this->lastProgress >= $timeout) {
                ($this->onStall)();
                return;
            }
            $this->watchStall();
        });
    }
}
