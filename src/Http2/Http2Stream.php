<?php

declare(strict_types=1);

namespace Weft\Http2;

use Weft\Coroutine\Coroutine;
use Weft\Http\Message\Request;

/**
 * One stream's state (RFC 9113 §5.1) as the session keeps it: what has arrived of its request, its two
 * flow-control windows, and the DATA it has queued that the peer's windows do not admit yet. A plain
 * record the session owns; the request's coroutine reaches it only through the session.
 *
 * @internal
 */
final class Http2Stream
{
    /** The peer may send this many more DATA bytes on the stream. */
    public int $receiveWindow = Http2Session::STREAM_WINDOW;
    /** DATA bytes received and not yet given back with a WINDOW_UPDATE. */
    public int $unacknowledged = 0;
    public string $method = '';
    public string $target = '';
    /** The request's header section in HeaderBlock form ("\r\nname: value"...). */
    public string $headerBlock = '';
    public string $trailerBlock = '';
    public string $body = '';
    /** The request's content-length field, checked against its DATA (§8.1.1). */
    public ?int $contentLength = null;
    /** END_STREAM received: the request is complete (half-closed remote). */
    public bool $remoteClosed = false;
    /** END_STREAM sent (or the stream reset): nothing more goes out on it. */
    public bool $localClosed = false;
    /** Answered by the server itself (413, 431, ...): what else arrives of the request is dropped. */
    public bool $answered = false;
    /** Handed to the application (Dispatcher::dispatch()), until its serve() has ended. */
    public bool $running = false;
    /** Reset by either side: whatever the application still makes of its answer is discarded. */
    public bool $reset = false;
    /** The response's head is out. */
    public bool $headersSent = false;
    public ?Request $request = null;
    /** DATA payload waiting for window, sent from $outOffset on. */
    public string $out = '';
    public int $outOffset = 0;
    /** END_STREAM follows the last byte of $out. */
    public bool $endAfterOut = false;
    /**
     * The response's trailer fields (lower-case names), evaluated once its body was all queued: a HEADERS
     * frame with END_STREAM after the last DATA, HPACK-encoded when it is written (the encoder's table
     * follows the order of the blocks on the wire). Null: the last DATA ends the stream.
     *
     * @var list<array{0: string, 1: string}>|null
     */
    public ?array $trailers = null;
    /** The coroutine serving the stream, while it runs: cancelled when the client resets the stream. */
    public ?Coroutine $coroutine = null;
    /** A streamed body's producer, waiting for this stream's queue to drain. */
    public ?Coroutine $waiter = null;
    /** What the stream holds of the worker's ReceiveBudget: its body, arriving or in the application. */
    public int $held = 0;
    /** For the access log: response status and body bytes queued. */
    public int $status = 0;
    public int $sent = 0;

    public function __construct(
        public readonly int $id,
        /** The peer's window for this stream: DATA we may still send. */
        public int $sendWindow,
    ) {
    }

    /** DATA queued and not sent yet. */
    public function queued(): int
    {
        return \strlen($this->out) - $this->outOffset;
    }
}
