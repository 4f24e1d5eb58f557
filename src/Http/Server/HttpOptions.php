<?php

declare(strict_types=1);

namespace Weft\Http\Server;

use Weft\Http\Parser\Limits;

/** The HTTP server's limits and timeouts, with defaults close to nginx's. */
final class HttpOptions
{
    /** nginx client_header_timeout is 60 s; slowloris protection wants it shorter. */
    public const DEFAULT_HEADER_TIMEOUT = 10.0;
    /** Between two reads of a request body (nginx client_body_timeout: 60 s). */
    public const DEFAULT_BODY_TIMEOUT = 60.0;
    /** nginx keepalive_timeout is 75 s. */
    public const DEFAULT_IDLE_TIMEOUT = 60.0;
    /** A client that reads nothing of our answer for this long is cut off (nginx send_timeout: 60 s). */
    public const DEFAULT_SEND_TIMEOUT = 60.0;
    /** How long a draining worker waits for an idle keep-alive connection's next request. */
    public const DRAIN_IDLE_WAIT = 1.0;
    /** $upgradeMemory: derived from PHP's memory_limit in the worker (ConnectionBudget::forMemoryLimit()). */
    public const AUTO = -1;

    public readonly Limits $limits;

    public function __construct(
        ?Limits $limits = null,
        public readonly float $headerTimeout = self::DEFAULT_HEADER_TIMEOUT,
        public readonly float $idleTimeout = self::DEFAULT_IDLE_TIMEOUT,
        public readonly float $sendTimeout = self::DEFAULT_SEND_TIMEOUT,
        public readonly bool $debug = false,
        public readonly float $bodyTimeout = self::DEFAULT_BODY_TIMEOUT,
        /** @var array<string, object> server-wide options of upgraded protocols, by name ('websocket') */
        public readonly array $upgrades = [],
        /**
         * Bytes of request bodies a worker may hold at once, all its connections together (bodies still
         * arriving and bodies of requests in the application); a body that would go beyond is refused
         * with a 503 and its connection closed. 0: no bound. Without one, a few dozen clients that each
         * send a body just under --max-body take a worker past its memory limit, and every request on
         * it dies with it.
         */
        public readonly int $bodyMemory = 0,
        /**
         * Bytes a worker's upgraded connections (WebSockets) may hold while open, each charged what an
         * idle one of its kind costs (Upgrade::cost()); a handshake beyond it is answered 503. 0: no
         * bound; AUTO: derived from memory_limit once the application has loaded.
         */
        public readonly int $upgradeMemory = 0,
        /**
         * --trusted-proxies: peers whose X-Forwarded-For / Forwarded name the client, who then is the
         * request's remoteAddress() and the access log's address. null (the default): none, at no cost.
         */
        public readonly ?TrustedProxies $trustedProxies = null,
    ) {
        $this->limits = $limits ?? new Limits();
        if ($headerTimeout <= 0 || $idleTimeout <= 0 || $sendTimeout <= 0 || $bodyTimeout <= 0) {
            throw new \InvalidArgumentException('HTTP timeouts must be positive');
        }
        if ($upgradeMemory < 0 && $upgradeMemory !== self::AUTO) {
            throw new \InvalidArgumentException('The memory of upgraded connections cannot be negative');
        }
    }
}
