<?php

declare(strict_types=1);

namespace Weft\Line;

use Psr\Log\LoggerInterface;
use Weft\Server\Connection;
use Weft\Server\Protocol;
use Weft\Server\Session;
use Weft\Server\Timeouts;

/**
 * The line protocol for the server core: each line goes to the application,
 * `fn (string $line, Peer $peer): ?string`, and a non-null result goes back as a line.
 */
final class LineProtocol implements Protocol
{
    public const DEFAULT_IDLE_TIMEOUT = 300.0;
    /** A peer that reads nothing of our replies for this long is cut off. */
    public const DEFAULT_SEND_TIMEOUT = 60.0;

    public readonly LineCodec $codec;
    private readonly Timeouts $timeouts;

    /** @param \Closure(string, Peer): ?string $application */
    public function __construct(
        public readonly \Closure $application,
        public readonly LoggerInterface $logger,
        int $maxLineLength = LineCodec::DEFAULT_MAX_LINE,
        float $idleTimeout = self::DEFAULT_IDLE_TIMEOUT,
        float $sendTimeout = self::DEFAULT_SEND_TIMEOUT,
    ) {
        $this->codec = new LineCodec($maxLineLength);
        // A line, however slowly it trickles, and the wait for the next one share the idle timeout.
        $this->timeouts = new Timeouts(header: $idleTimeout, body: $idleTimeout, idle: $idleTimeout, send: $sendTimeout);
    }

    public function open(Connection $connection): Session
    {
        // With the extension's I/O, reads of whole lines come cut in C (LineSession::received()).
        $connection->io()?->frameLines($this->codec->maxLength);
        return new LineSession($this, $connection);
    }

    public function refusal(string $reason): string
    {
        return "ERROR $reason\r\n";
    }

    public function timeouts(): Timeouts
    {
        return $this->timeouts;
    }

    // The application is called by LineSession::serve() (no frame of ours between the two); what goes
    // wrong there is answered by the policy below: a failure, or a result that is neither a string nor
    // null, is logged and answered with an ERROR line.

    /** @internal for LineSession: a handler's failure, logged and answered with an ERROR line */
    public function failed(\Throwable $e): string
    {
        $this->logger->error('Line handler failed: {message}', ['message' => $e->getMessage(), 'exception' => $e]);
        return 'ERROR internal server error';
    }

    /** @internal for LineSession: a handler's result that is neither a string nor null, logged and answered with an ERROR line */
    public function rejected(mixed $reply): string
    {
        $this->logger->error('Line handler returned {type}; expected a string or null', ['type' => \get_debug_type($reply)]);
        return 'ERROR internal server error';
    }
}
