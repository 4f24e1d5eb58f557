<?php

declare(strict_types=1);

namespace Weft\WebSocket;

use Weft\Server\Timeouts;

/** Limits and timers of WebSocket connections (the serve command's --ws-* options, or per upgrade). */
final class WebSocketOptions
{
    public const DEFAULT_MAX_MESSAGE = 1 << 20;
    public const DEFAULT_IDLE_TIMEOUT = 60.0;
    /** How long we wait for the peer's close frame once we sent ours (RFC 6455 7.1.1: the server closes TCP first). */
    public const DEFAULT_CLOSE_TIMEOUT = 5.0;
    public const DEFAULT_SEND_TIMEOUT = 60.0;

    private ?Timeouts $timeouts = null;

    /**
     * @param int $maxMessage largest message (all fragments together); beyond it the connection is closed with 1009
     * @param float $idleTimeout a connection with no frame in either direction for this long is closed with 1001
     * @param list<string> $protocols subprotocols this endpoint speaks, preferred first (Sec-WebSocket-Protocol)
     * @param list<string>|null $origins allowed Origin values (null: any); others get a 403
     */
    public function __construct(
        public readonly int $maxMessage = self::DEFAULT_MAX_MESSAGE,
        public readonly float $idleTimeout = self::DEFAULT_IDLE_TIMEOUT,
        public readonly float $closeTimeout = self::DEFAULT_CLOSE_TIMEOUT,
        public readonly float $sendTimeout = self::DEFAULT_SEND_TIMEOUT,
        public readonly array $protocols = [],
        public readonly ?array $origins = null,
    ) {
        if ($maxMessage < 1) {
            throw new \InvalidArgumentException('The WebSocket message limit must be at least 1 byte');
        }
        if ($idleTimeout <= 0 || $closeTimeout <= 0 || $sendTimeout <= 0) {
            throw new \InvalidArgumentException('WebSocket timeouts must be positive');
        }
    }

    /**
     * The connection core's timers for a WebSocket: the idle timer restarted by every frame in either
     * direction, and the wait for the peer's close frame from when ours went out.
     *
     * @internal
     */
    public function timeouts(): Timeouts
    {
        return $this->timeouts ??= Timeouts::forStream(idle: $this->idleTimeout, closing: $this->closeTimeout, send: $this->sendTimeout);
    }
}
