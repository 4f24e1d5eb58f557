<?php

declare(strict_types=1);

namespace Weft\Http\Server;

use Weft\Http\Parser\Limits;

/** The HTTP server's limits and timeouts, with defaults close to nginx's. */
final class HttpOptions
{
    /** nginx client_header_timeout is 60 s; slowloris protection wants it shorter. */
    public const DEFAULT_HEADER_TIMEOUT = 10.0;
    /** nginx keepalive_timeout is 75 s. */
    public const DEFAULT_IDLE_TIMEOUT = 60.0;
    /** A client that stops reading our response for this long is cut off (nginx send_timeout: 60 s). */
    public const DEFAULT_WRITE_TIMEOUT = 60.0;
    /** Pipelined requests answered before the connection's reads are paused until responses drain. */
    public const DEFAULT_MAX_PIPELINE = 128;

    public readonly Limits $limits;

    public function __construct(
        ?Limits $limits = null,
        public readonly float $headerTimeout = self::DEFAULT_HEADER_TIMEOUT,
        public readonly float $idleTimeout = self::DEFAULT_IDLE_TIMEOUT,
        public readonly float $writeTimeout = self::DEFAULT_WRITE_TIMEOUT,
        public readonly bool $debug = false,
        public readonly int $maxPipeline = self::DEFAULT_MAX_PIPELINE,
    ) {
        $this->limits = $limits ?? new Limits();
        if ($headerTimeout <= 0 || $idleTimeout <= 0 || $writeTimeout <= 0) {
            throw new \InvalidArgumentException('HTTP timeouts must be positive');
        }
    }
}
