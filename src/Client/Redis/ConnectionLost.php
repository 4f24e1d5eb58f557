<?php

declare(strict_types=1);

namespace Weft\Client\Redis;

use Weft\Pool\BrokenConnection;

/**
 * The connection is gone (reset, closed by the server, killed). The connection is closed and must not
 * be used again; a pool discards it. isSafeToRetry() tells whether the server can have acted on what was
 * being sent. (Not opening one at all is Weft\Socket\ConnectException.)
 */
final class ConnectionLost extends \Weft\Socket\ConnectionLost implements BrokenConnection
{
    private function __construct(string $message, private readonly bool $safeToRetry, ?\Throwable $previous = null)
    {
        $code = $previous?->getCode();
        parent::__construct($message, \is_int($code) ? $code : 0, $previous);
    }

    /** Found dead before anything of the command was written: nothing can have happened. */
    public static function beforeSending(string $where, bool $watching): self
    {
        return new self(
            "The Redis connection to $where was closed by the server (found before sending the command)",
            !$watching,
        );
    }

    /** The write failed: a partial command is never run, so only a lone command (or MULTI..EXEC) is safe. */
    public static function whileSending(string $where, \Throwable $previous, bool $safe): self
    {
        return new self("The Redis connection to $where broke while sending: {$previous->getMessage()}", $safe, $previous);
    }

    /** The command was sent: the server may have run it. */
    public static function whileReading(string $where, ?\Throwable $previous = null): self
    {
        $why = $previous === null ? 'the server closed the connection' : $previous->getMessage();
        return new self("The Redis connection to $where was lost while waiting for a reply: $why", false, $previous);
    }

    public static function closed(string $where): self
    {
        return new self("The Redis connection to $where is closed", true);
    }

    public function isSafeToRetry(): bool
    {
        return $this->safeToRetry;
    }
}
