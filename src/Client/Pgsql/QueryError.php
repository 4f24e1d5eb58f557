<?php

declare(strict_types=1);

namespace Weft\Client\Pgsql;

/**
 * The server refused a statement (syntax error, constraint violation, ...). The connection is still
 * usable. sqlState() is the five-character SQLSTATE code, e.g. 42601 syntax error, 23505 unique violation.
 */
final class QueryError extends \RuntimeException implements \Weft\WeftException
{
    private function __construct(
        string $message,
        private readonly string $sqlState,
        private readonly ?string $detail,
        private readonly ?string $hint,
        private readonly string $query,
    ) {
        parent::__construct($message);
    }

    /** @internal */
    public static function fromResult(\PgSql\Result $result, string $query): self
    {
        $state = \pg_result_error_field($result, \PGSQL_DIAG_SQLSTATE);
        $primary = \pg_result_error_field($result, \PGSQL_DIAG_MESSAGE_PRIMARY);
        $detail = \pg_result_error_field($result, \PGSQL_DIAG_MESSAGE_DETAIL);
        $hint = \pg_result_error_field($result, \PGSQL_DIAG_MESSAGE_HINT);
        if (!\is_string($primary) || $primary === '') {
            $primary = \trim((string) \pg_result_error($result)) ?: 'unknown error';
        }
        $message = \sprintf('SQLSTATE[%s]: %s', \is_string($state) ? $state : '?????', $primary);
        if (\is_string($detail) && $detail !== '') {
            $message .= "\nDETAIL: " . $detail;
        }
        return new self(
            $message,
            \is_string($state) ? $state : '',
            \is_string($detail) && $detail !== '' ? $detail : null,
            \is_string($hint) && $hint !== '' ? $hint : null,
            $query,
        );
    }

    /** The SQLSTATE code ("42601", "23505", ...). */
    public function sqlState(): string
    {
        return $this->sqlState;
    }

    /** The server's DETAIL line, e.g. "Key (email)=(a@b.c) already exists." */
    public function detail(): ?string
    {
        return $this->detail;
    }

    public function hint(): ?string
    {
        return $this->hint;
    }

    /** The statement that failed (or the prepared statement's name). */
    public function query(): string
    {
        return $this->query;
    }
}
