<?php

declare(strict_types=1);

namespace Weft\Client\Pgsql;

use Weft\Pool\BrokenConnection;

/**
 * The connection is unusable: the server went away, the socket broke, or a wait on it was interrupted
 * (timeout, cancellation) leaving the protocol mid-statement. Close it and use another one; a pool
 * does that by itself.
 */
final class ConnectionLost extends \Weft\Socket\ConnectionLost implements BrokenConnection
{
    private function __construct(string $message, private readonly bool $safeToRetry, ?\Throwable $previous = null)
    {
        parent::__construct($message, 0, $previous);
    }

    /** Found dead before the statement was sent: nothing can have happened on the server. */
    public static function beforeSend(string $reason, bool $inTransaction): self
    {
        return new self('PostgreSQL connection lost: ' . $reason, !$inTransaction);
    }

    /**
     * Broke while sending. PostgreSQL commits an implicit transaction only at the Sync message that ends
     * a statement; as the send failed, that message never arrived, so the statement had no effect.
     */
    public static function whileSending(string $reason, bool $inTransaction): self
    {
        return new self('PostgreSQL connection lost while sending a statement: ' . $reason, !$inTransaction);
    }

    /** Broke after the statement was sent: it may or may not have run. */
    public static function afterSend(string $reason): self
    {
        return new self('PostgreSQL connection lost while waiting for a result: ' . $reason, false);
    }

    public function isSafeToRetry(): bool
    {
        return $this->safeToRetry;
    }
}
