<?php

declare(strict_types=1);

namespace Weft\Client\Mysql;

use Weft\Pool\BrokenConnection;

/**
 * The connection is gone or out of sync (the server closed it, killed it or shut down; a reset; a
 * protocol desync; a command interrupted while it waited for its reply). The connection stays unusable:
 * every later call on it throws this again.
 *
 * isSafeToRetry() is true only when the command was provably never sent: the server had closed the
 * connection before we wrote it (found on the idle connection, or the write itself failed), and no
 * transaction was open, so running the command on a fresh connection cannot apply it twice.
 */
final class ConnectionLost extends \Weft\Socket\ConnectionLost implements BrokenConnection
{
    private function __construct(string $message, int $code, private readonly bool $safeToRetry, ?\Throwable $previous = null)
    {
        parent::__construct($message, $code, $previous);
    }

    public function isSafeToRetry(): bool
    {
        return $this->safeToRetry;
    }

    /** Found dead before the command was written: nothing was sent. */
    public static function beforeSend(int $id, string $why, bool $inTransaction): self
    {
        return new self(
            \sprintf(
                'MySQL connection #%d was closed by the server before the command was sent (%s)%s',
                $id,
                $why,
                $inTransaction ? '; the open transaction is lost' : '; the command was not sent',
            ),
            0,
            !$inTransaction,
        );
    }

    /** Writing the command failed because the server had already closed the connection. */
    public static function writeFailed(int $id, \Throwable $previous, bool $inTransaction): self
    {
        return new self(
            \sprintf(
                'MySQL connection #%d was closed by the server; sending the command failed: %s%s',
                $id,
                $previous->getMessage(),
                $inTransaction ? ' (the open transaction is lost)' : '',
            ),
            0,
            !$inTransaction,
            $previous,
        );
    }

    /** Lost after the command was (at least partly) sent: it may or may not have been applied. */
    public static function duringCommand(int $id, \Throwable $previous): self
    {
        return new self(
            \sprintf(
                'MySQL connection #%d was lost while waiting for the reply (the command may or may not have been applied): %s',
                $id,
                $previous->getMessage(),
            ),
            0,
            false,
            $previous,
        );
    }

    /** The server ended the connection with an error (shutdown 1053, killed 1927, idle timeout 4031). */
    public static function byServer(int $id, int $code, string $sqlState, string $message): self
    {
        return new self(
            \sprintf('MySQL connection #%d was ended by the server: SQLSTATE[%s] %d: %s', $id, $sqlState, $code, $message),
            $code,
            false,
        );
    }

    public static function desync(int $id, \Throwable $previous): self
    {
        return new self(
            \sprintf('MySQL connection #%d is out of sync with the server (protocol error: %s); it was closed', $id, $previous->getMessage()),
            0,
            false,
            $previous,
        );
    }

    /**
     * The same failure, not retryable: the connection had already run other commands for the same task
     * (running the task again would repeat those).
     */
    public static function afterEarlierCommands(self $lost): self
    {
        return $lost->safeToRetry
            ? new self($lost->getMessage() . ' (after earlier commands of the same task, so it is not retried)', $lost->getCode(), false, $lost)
            : $lost;
    }

    /** A later call on a connection that was lost or closed before. */
    public static function unusable(int $id, string $why): self
    {
        return new self(\sprintf('MySQL connection #%d is unusable: %s', $id, $why), 0, false);
    }
}
