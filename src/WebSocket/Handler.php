<?php

declare(strict_types=1);

namespace Weft\WebSocket;

/**
 * The event form of a WebSocket handler, for many connections per worker: nothing waits per connection
 * between messages. Each call runs in a pooled coroutine of its own (so it may wait on a query or a
 * sleep), one call at a time per connection and in order: onOpen, then onMessage for each message,
 * then onClose once the connection has ended.
 *
 * The closure form, fn (WebSocket $ws) with a receive() loop, keeps one coroutine (a Fiber, with PHP's
 * fixed 16 KB VM stack, plus its C stack) per connection for its whole life; this form holds none, and
 * an idle connection costs about what an idle HTTP keep-alive connection does (see Upgrade::COST_EVENT).
 */
interface Handler
{
    public function onOpen(WebSocket $ws): void;

    public function onMessage(WebSocket $ws, Message $message): void;

    /** The connection has ended; $ws->closeCode() says how. Sends are no longer possible. */
    public function onClose(WebSocket $ws): void;
}
