<?php

declare(strict_types=1);

namespace Weft\Http\Server;

use Psr\Http\Server\RequestHandlerInterface;
use Psr\Log\LoggerInterface;
use Weft\Http\Message\ErrorResponse;
use Weft\Http\Message\ResponseEncoder;
use Weft\Http\Parser\RequestParser;
use Weft\Observe\AccessLog;
use Weft\Observe\RequestMetrics;
use Weft\Server\Connection;
use Weft\Server\ConnectionBudget;
use Weft\Server\Protocol;
use Weft\Server\ReceiveBudget;
use Weft\Server\Session;
use Weft\Server\Timeouts;

/**
 * HTTP/1.1 for the server core: what every connection of a worker shares (the application call, the
 * encoder, the cached Date). Each connection's state is an HttpSession.
 */
final class HttpProtocol implements Protocol
{
    public readonly ApplicationCall $call;
    public readonly ResponseEncoder $encoder;
    /** Whether a finished request is recorded anywhere: when not, its handling is not even timed. */
    public readonly bool $observed;
    private readonly Timeouts $timeouts;
    /** What this worker's sessions hold of requests being received or run (HttpOptions::$bodyMemory); upgraded protocols share it. */
    public readonly ReceiveBudget $budget;
    /** What this worker's upgraded connections (WebSockets) may hold while open (HttpOptions::$upgradeMemory). */
    public readonly ConnectionBudget $upgraded;
    /** HttpOptions::$trustedProxies, read once per request: null costs one null check. */
    public readonly ?TrustedProxies $proxies;
    /**
     * HTTP/2 beside HTTP/1.1 (--http2): the protocol that opens a connection whose TLS handshake chose
     * "h2", or that starts with the HTTP/2 preface (h2c with prior knowledge). Set once by whoever builds
     * both (it needs this object); named by the Server interface so Http stays below Http2.
     */
    public ?Protocol $http2 = null;
    private int $dateSecond = 0;
    private string $date = '';

    public function __construct(
        \Closure|RequestHandlerInterface $application,
        public readonly LoggerInterface $logger,
        public readonly HttpOptions $options = new HttpOptions(),
        /** --access-log; null (the default) costs one null check per request. */
        public readonly ?AccessLog $accessLog = null,
        /** The /metrics request figures, recorded at the same point as the access log line. */
        public readonly ?RequestMetrics $metrics = null,
    ) {
        $this->observed = $accessLog !== null || $metrics !== null;
        $this->proxies = $options->trustedProxies;
        $this->call = new ApplicationCall($application, fn (): LoggerInterface => $this->logger, $options->debug);
        $this->encoder = new ResponseEncoder();
        $this->budget = new ReceiveBudget($options->bodyMemory);
        // Built in the worker once the application has loaded: AUTO sees what the application holds.
        $this->upgraded = $options->upgradeMemory === HttpOptions::AUTO
            ? ConnectionBudget::forMemoryLimit(self::memoryLimit(), \memory_get_usage())
            : new ConnectionBudget($options->upgradeMemory);
        $this->timeouts = new Timeouts(
            header: $options->headerTimeout,
            body: $options->bodyTimeout,
            idle: $options->idleTimeout,
            send: $options->sendTimeout,
            drainIdle: HttpOptions::DRAIN_IDLE_WAIT,
        );
    }

    /** PHP's memory_limit in bytes; 0 when there is none. */
    private static function memoryLimit(): int
    {
        $limit = \trim((string) \ini_get('memory_limit'));
        if ($limit === '' || $limit === '-1') {
            return 0;
        }
        $bytes = (int) $limit;
        return match (\strtolower(\substr($limit, -1))) {
            'g' => $bytes << 30,
            'm' => $bytes << 20,
            'k' => $bytes << 10,
            default => $bytes,
        };
    }

    public function open(Connection $connection): Session
    {
        if ($this->http2 !== null && $connection->tls?->alpn === 'h2') {
            return $this->http2->open($connection);
        }
        $host = self::host($connection->remoteAddress());
        $io = $connection->io();
        $framed = $io !== null && RequestParser::buildsRequests();
        if ($framed) {
            $limits = $this->options->limits;
            $io->frameRequests($limits->maxHeaderBytes, $limits->maxTargetBytes, $limits->maxHeaderCount, $limits->methodSet, $host);
        }
        return new HttpSession($this, $connection, $host, $framed);
    }

    public function refusal(string $reason): string
    {
        $response = ErrorResponse::unavailable($reason);
        return $this->encoder->encode($response, '1.1', false, false, $this->date());
    }

    public function timeouts(): Timeouts
    {
        return $this->timeouts;
    }

    /** The Date field's value, formatted once a second. */
    public function date(): string
    {
        $now = \time();
        if ($now !== $this->dateSecond) {
            $this->dateSecond = $now;
            $this->date = ResponseEncoder::httpDate($now);
        }
        return $this->date;
    }

    public static function host(?string $address): ?string
    {
        if ($address === null) {
            return null;
        }
        $colon = \strrpos($address, ':');
        return \trim($colon === false ? $address : \substr($address, 0, $colon), '[]');
    }
}
