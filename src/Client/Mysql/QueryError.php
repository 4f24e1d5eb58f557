<?php

declare(strict_types=1);

namespace Weft\Client\Mysql;

/**
 * The server answered a command with an error (an ERR packet): getCode() is the server's error number
 * (1064 syntax error, 1146 unknown table, 1062 duplicate key, ...), sqlState() the SQLSTATE.
 * The connection stays usable.
 */
class QueryError extends \RuntimeException implements \Weft\WeftException
{
    final public function __construct(
        string $message,
        int $code,
        private readonly string $sqlState = 'HY000',
        private readonly string $serverMessage = '',
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, $code, $previous);
    }

    public static function fromServer(int $code, string $sqlState, string $message): static
    {
        return new static(\sprintf('SQLSTATE[%s] %d: %s', $sqlState, $code, $message), $code, $sqlState, $message);
    }

    /** The five-character SQLSTATE, e.g. "42000" for a syntax error, "23000" for a duplicate key. */
    public function sqlState(): string
    {
        return $this->sqlState;
    }

    /** The server's own message, without the code and SQLSTATE prefix. */
    public function serverMessage(): string
    {
        return $this->serverMessage;
    }
}
