<?php

declare(strict_types=1);

namespace Weft\Server;

/**
 * A protocol's connection timers, as nginx has them. Each runs only while the connection waits for its
 * peer: none runs while a request is in the application.
 */
final class Timeouts
{
    /**
     * @param float $header a request head must be complete within this time of its start (the first
     *        request: of the connection's opening), however slowly it trickles
     * @param float $body the gap allowed between two reads of a request body
     * @param float $idle how long a keep-alive connection waits for its next request
     * @param float $send how long a peer may leave our output unread; restarts on every progress, so a
     *        slow but moving reader is never cut
     * @param float $drainIdle how long an idle connection may stay once the worker drains (a request may
     *        be on its way to us); 0 closes it at once
     */
    public function __construct(
        public readonly float $header,
        public readonly float $body,
        public readonly float $idle,
        public readonly float $send,
        public readonly float $drainIdle = 0.0,
    ) {
        if ($header <= 0 || $body <= 0 || $idle <= 0 || $send <= 0 || $drainIdle < 0) {
            throw new \InvalidArgumentException('Connection timeouts must be positive');
        }
    }

    /**
     * A message stream's timers (a protocol with no request heads, as WebSocket after its upgrade; its
     * phases are Session::STREAM_OPEN and STREAM_CLOSING).
     *
     * @param float $idle how long an open stream may go without a read (restarted by every one)
     * @param float $closing how long we wait for the peer's closing message once ours is out
     * @param float $send as for the constructor
     */
    public static function forStream(float $idle, float $closing, float $send): self
    {
        return new self(header: $closing, body: $idle, idle: $idle, send: $send);
    }
}
