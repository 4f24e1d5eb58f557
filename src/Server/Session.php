<?php

declare(strict_types=1);

namespace Weft\Server;

/**
 * One connection's protocol state. Its methods run from loop callbacks (received, ended, resume, closed,
 * timedOut) or in the request's coroutine (serve); it writes only through its Connection.
 */
interface Session
{
    /** Nothing of a request received: the idle (keep-alive) timer applies. */
    public const IDLE = 0;
    /** Part of a request's head (or, in the line protocol, of a line) received: the header timer. */
    public const HEAD = 1;
    /** A head is complete and its body is arriving: the body timer, restarted by every read. */
    public const BODY = 2;
    /** A request is in the application or being answered: no read timer runs. */
    public const BUSY = 3;
    /**
     * Requests are in the application and more may arrive beside them (HTTP/2 streams): no read timer
     * runs, as for BUSY, but reading goes on on every loop (a stream's WINDOW_UPDATE or RST_STREAM, a new
     * stream, must be read while the others run).
     */
    public const MULTIPLEXING = 4;

    /*
     * The same timers under the names a message stream uses (a protocol with no request heads, as
     * WebSocket after its upgrade; its Timeouts come from Timeouts::forStream()).
     */
    /** The stream is open: its idle time runs, restarted by every read (the BODY timer). */
    public const STREAM_OPEN = self::BODY;
    /** Our closing message is out: the wait for the peer's runs from then, not restarted (the HEAD timer). */
    public const STREAM_CLOSING = self::HEAD;

    /** Bytes arrived: parse every complete request and dispatch them (Dispatcher::dispatch()), then flush once. */
    public function received(string $bytes): void;

    /** The peer closed its sending side; what was received is still served. */
    public function ended(): void;

    public function phase(): int;

    /** Whether reading more now is useful (false: the input buffered behind a busy request is full). */
    public function wantsInput(): bool;

    /** The head or body timer expired: what to write before closing (e.g. a 408), or null to close quietly. */
    public function timedOut(): ?string;

    /**
     * Go on with pipelined requests: the connection's unsent output fell below the bound, or the
     * Dispatcher reports that a call whose dispatch() returned false has ended (its answer is written).
     */
    public function resume(): void;

    public function closed(): void;

    /**
     * Runs one request in its own (pooled) coroutine: call the application and write the answer (queued;
     * the session flushes). It never dispatches: the Dispatcher tells the session how to go on.
     */
    public function serve(mixed $request): void;

    /** A short description of a request for logs and `status`, e.g. "GET /path?query". */
    public function describe(mixed $request): string;
}
