<?php

declare(strict_types=1);

namespace Weft\Client\Pgsql;

use Weft\Coroutine\ConcurrentUse;
use Weft\Coroutine\Coroutine;
use Weft\Coroutine\IoWaiter;
use Weft\Coroutine\Timeout;
use Weft\Socket\ConnectException;
use Weft\Socket\ConnectTimeout;

/**
 * A PostgreSQL connection on PHP's pgsql extension (libpq), used through libpq's asynchronous API.
 *
 * Why libpq and not our own wire-protocol code: libpq is PostgreSQL's reference client. It implements
 * every authentication method (SCRAM-SHA-256, md5, certificates, GSS), TLS with all sslmode variants,
 * multi-host failover and the text form of every type, and stays correct as the server evolves. Its
 * asynchronous API (PQconnectStart/PQconnectPoll, PQsendQueryParams, PQflush, PQconsumeInput, PQisBusy)
 * never blocks and exposes its socket, so Weft's loop watches that socket and the calling coroutine only
 * suspends while the server works: one worker runs many queries at once, on many connections.
 *
 * - connect: pg_connect(ASYNC) then pg_connect_poll() while waiting readable/writable as it asks, under
 *   a deadline Weft enforces itself (libpq applies connect_timeout only to blocking connects).
 * - statements: pg_send_*(), pg_flush() while waiting writable, then pg_consume_input() while waiting
 *   readable until the connection is no longer busy, then pg_get_result() until there are no more results.
 *   One limit of PHP 8.2's extension: pg_send_*() finish writing a statement themselves (retrying every
 *   10 ms) when it does not fit in the socket's send buffer, so only a statement of megabytes blocks
 *   the worker, while the server reads it. Extensions whose pg_socket() stream accepts
 *   stream_set_blocking(false) (which we call) return at once and leave the rest to pg_flush().
 * - Inside a coroutine every wait suspends only that coroutine; outside of any (sync mode) the same wait
 *   blocks the process on select(2).
 * - A connection serves one coroutine at a time; a second one using it meanwhile gets a ConcurrentUse
 *   error. Use Weft\Client\Pgsql\Pool to share connections.
 * - A wait interrupted by a timeout or a cancellation leaves the protocol mid-statement: the connection
 *   is then closed, and its next use throws ConnectionLost (safe to retry).
 *
 * Host names are resolved by libpq with getaddrinfo(), which blocks: use IP addresses (or hostaddr) in
 * latency-sensitive services.
 */
final class Connection
{
    private const TX_STATES = [\PGSQL_TRANSACTION_ACTIVE, \PGSQL_TRANSACTION_INTRANS, \PGSQL_TRANSACTION_INERROR];

    /** @var resource|null libpq's socket as a PHP stream (it does not own the descriptor) */
    private mixed $socket;
    private ?IoWaiter $waiter;
    private bool $busy = false;
    private ?Coroutine $holder = null;
    /** The coroutine that opened a transaction with begin() or transaction(); null in sync mode or none. */
    private ?Coroutine $transactionOwner = null;
    private int $statements = 0;
    private int $pid;
    private ?string $lostReason = null;
    /** Whether a transaction was open after the last statement: libpq forgets it once the connection broke. */
    private bool $transactionOpen = false;

    /** @param resource $socket */
    private function __construct(private ?\PgSql\Connection $link, mixed $socket, private readonly Config $config)
    {
        $this->socket = $socket;
        $this->waiter = new IoWaiter($socket);
        $this->pid = \pg_get_pid($link);
    }

    private static function connectFailed(string $address, string $libpqMessage): ConnectException
    {
        return new ConnectException(\sprintf('Failed to connect to PostgreSQL at %s: %s', $address, \trim($libpqMessage)));
    }

    /**
     * @throws ConnectException with libpq's message (refused, authentication failed, ...)
     * @throws ConnectTimeout (a ConnectException) after the config's connect timeout
     */
    public static function connect(Config|string $config): self
    {
        $config = \is_string($config) ? Config::fromUrl($config) : $config;
        $address = $config->address();
        \error_clear_last();
        $link = @\pg_connect($config->toConnectionString(), \PGSQL_CONNECT_ASYNC | \PGSQL_CONNECT_FORCE_NEW);
        if ($link === false) {
            throw self::connectFailed($address, \error_get_last()['message'] ?? 'pg_connect() failed');
        }
        $deadline = \hrtime(true) / 1e9 + $config->connectTimeout;
        // libpq may replace its socket while connecting (another address, SSL fallback): a fresh
        // stream and waiter for each step, so nothing watches a descriptor libpq has closed.
        $status = \PGSQL_POLLING_WRITING;
        while (true) {
            if ($status === \PGSQL_POLLING_READING || $status === \PGSQL_POLLING_WRITING) {
                $socket = @\pg_socket($link);
                if ($socket === false) {
                    $message = \pg_last_error($link);
                    \pg_close($link);
                    throw self::connectFailed($address, $message ?: 'no socket');
                }
                $waiter = new IoWaiter($socket);
                try {
                    $left = $deadline - \hrtime(true) / 1e9;
                    if ($left <= 0) {
                        throw Timeout::after($config->connectTimeout, 'Connect');
                    }
                    $status === \PGSQL_POLLING_READING ? $waiter->readable($left) : $waiter->writable($left);
                } catch (\Throwable $e) {
                    $waiter->close();
                    \pg_close($link);
                    if ($e instanceof Timeout && $e->token === null) {
                        throw ConnectTimeout::after($address, $config->connectTimeout, 'while libpq set up the PostgreSQL session');
                    }
                    throw $e;
                }
                $waiter->close();
            }
            $status = \pg_connect_poll($link);
            if ($status === \PGSQL_POLLING_OK) {
                break;
            }
            if ($status === \PGSQL_POLLING_FAILED) {
                $message = \pg_last_error($link);
                \pg_close($link);
                throw self::connectFailed($address, $message ?: 'connection failed');
            }
        }
        $socket = \pg_socket($link);
        // Where the extension implements it, this is PQsetnonblocking(): pg_send_*() then return at once
        // instead of looping over usleep() until a large statement is written. A no-op on PHP 8.2.
        \stream_set_blocking($socket, false);
        return new self($link, $socket, $config);
    }

    /**
     * Runs one statement with $1, $2, ... placeholders. Without parameters it goes through the simple
     * protocol, which also accepts several statements separated by semicolons (the last result is returned).
     *
     * @param list<int|float|string|bool|null|\DateTimeInterface|\Stringable|\BackedEnum> $params
     * @throws QueryError|ConnectionLost
     */
    public function query(string $sql, array $params = []): Result
    {
        if ($params === []) {
            return $this->run($sql, static fn (\PgSql\Connection $link): int|bool => \pg_send_query($link, $sql));
        }
        $values = self::encodeParams($params);
        return $this->run($sql, static fn (\PgSql\Connection $link): int|bool => \pg_send_query_params($link, $sql, $values));
    }

    /**
     * Prepares a statement on the server. prepare($sql) picks a name; prepare($name, $sql) uses $name
     * (it must be unique on this connection).
     *
     * @throws QueryError|ConnectionLost
     */
    public function prepare(string $nameOrSql, ?string $sql = null): Statement
    {
        if ($sql === null) {
            $sql = $nameOrSql;
            $name = 'weft_' . ++$this->statements;
        } else {
            $name = $nameOrSql;
        }
        $this->run($sql, static fn (\PgSql\Connection $link): int|bool => \pg_send_prepare($link, $name, $sql));
        return new Statement($this, $name, $sql);
    }

    /**
     * @internal used by Statement::execute()
     * @param list<mixed> $params
     */
    public function executePrepared(string $name, string $sql, array $params): Result
    {
        $values = self::encodeParams($params);
        return $this->run($sql, static fn (\PgSql\Connection $link): int|bool => \pg_send_execute($link, $name, $values));
    }

    public function begin(): void
    {
        $this->query('BEGIN');
        $this->transactionOwner = \Weft\current();
    }

    public function commit(): void
    {
        try {
            $this->query('COMMIT');
        } finally {
            $this->transactionOwner = null;
        }
    }

    public function rollback(): void
    {
        try {
            $this->query('ROLLBACK');
        } finally {
            $this->transactionOwner = null;
        }
    }

    /**
     * Runs $task inside a transaction: commits when it returns, rolls back when it throws (and rethrows).
     *
     * @template T
     * @param \Closure(self): T $task
     * @return T
     */
    public function transaction(\Closure $task): mixed
    {
        $this->begin();
        try {
            $result = $task($this);
        } catch (\Throwable $e) {
            if ($this->link !== null && $this->inTransaction()) {
                try {
                    $this->rollback();
                } catch (\Throwable) {
                    // The original failure matters more; a connection that cannot roll back is lost anyway.
                }
            }
            $this->transactionOwner = null;
            throw $e;
        }
        $this->commit();
        return $result;
    }

    /** Whether a transaction is open (also when it failed and waits for ROLLBACK). */
    public function inTransaction(): bool
    {
        return $this->link !== null && \in_array(\pg_transaction_status($this->link), self::TX_STATES, true);
    }

    /** A round trip to the server; false when the connection is unusable. */
    public function ping(): bool
    {
        try {
            $this->query('SELECT 1');
            return true;
        } catch (ConnectionLost) {
            return false;
        }
    }

    /**
     * Whether the connection can go back to a pool as it is: open, not in use, no transaction left open.
     * Makes no I/O.
     */
    public function isReusable(): bool
    {
        return $this->link !== null && !$this->busy
            && \pg_transaction_status($this->link) === \PGSQL_TRANSACTION_IDLE;
    }

    /**
     * Whether the connection still looks open, without a round trip: reads what the server may have sent
     * meanwhile (a server that closed an idle connection has left an error and an end of stream). Does
     * not wait; true while a statement runs.
     */
    public function isConnected(): bool
    {
        $link = $this->link;
        if ($link === null) {
            return false;
        }
        if ($this->busy) {
            return true;
        }
        // Twice: the first read may return the server's farewell, only the next one sees the end.
        return @\pg_consume_input($link) && @\pg_consume_input($link)
            && \pg_connection_status($link) === \PGSQL_CONNECTION_OK;
    }

    public function isClosed(): bool
    {
        return $this->link === null;
    }

    /** The server process id (for pg_cancel_backend / pg_terminate_backend, and logs). */
    public function backendPid(): int
    {
        return $this->pid;
    }

    public function config(): Config
    {
        return $this->config;
    }

    /** Escapes an identifier (table, column) for use in SQL text. Values belong in parameters. */
    public function quoteIdentifier(string $name): string
    {
        return '"' . \str_replace('"', '""', $name) . '"';
    }

    public function close(): void
    {
        $link = $this->link;
        if ($link === null) {
            return;
        }
        $this->lostReason ??= 'closed';
        // The waiter goes first: the stream reads libpq's descriptor from the connection on every select,
        // so nothing may watch it once pg_close() has freed that connection.
        $this->waiter?->close();
        $this->waiter = null;
        $this->socket = null;
        $this->link = null;
        \pg_close($link);
    }

    public function __destruct()
    {
        $this->close();
    }

    /**
     * @param \Closure(\PgSql\Connection): (int|bool) $send one pg_send_*() call
     * @throws QueryError|ConnectionLost
     */
    private function run(string $sql, \Closure $send): Result
    {
        $this->enter();
        $link = $this->link;
        $inTransaction = $this->transactionOpen;
        try {
            // A server that closed an idle connection (restart, terminate, idle timeout) has left an
            // error message and an end of stream in the socket: find that before sending, while a retry
            // is still harmless.
            // (The extension's notices about switching blocking modes on a dead connection are silenced:
            // the connection status says it all.)
            if (!@\pg_consume_input($link) || @\pg_connection_busy($link) || \pg_connection_status($link) !== \PGSQL_CONNECTION_OK) {
                throw $this->lose(ConnectionLost::beforeSend($this->libpqError('the server closed the connection'), $inTransaction));
            }
            $sent = @$send($link);
            while ($sent !== true) {
                if ($sent === false) {
                    throw $this->lose(ConnectionLost::whileSending($this->libpqError('write failed'), $inTransaction));
                }
                // Read what the server may already be sending, so neither side can stall the other.
                @\pg_consume_input($link);
                $this->waiter->writable();
                $sent = @\pg_flush($link);
            }
            return $this->collect($link, $sql);
        } catch (QueryError | ConnectionLost $e) {
            throw $e;
        } catch (\Throwable $e) {
            // Interrupted (timeout, cancel) mid-protocol: the connection is out of step for good.
            $this->lostReason = 'a statement was interrupted: ' . $e->getMessage();
            $this->close();
            throw $e;
        } finally {
            $this->busy = false;
            $this->holder = null;
        }
    }

    private function collect(\PgSql\Connection $link, string $sql): Result
    {
        $last = null;
        $error = null;
        while (true) {
            while (@\pg_connection_busy($link)) {
                if (\pg_connection_status($link) !== \PGSQL_CONNECTION_OK) {
                    break;
                }
                $this->waiter->readable();
                if (!@\pg_consume_input($link)) {
                    break;
                }
            }
            $result = \pg_get_result($link);
            if ($result === false) {
                break;
            }
            $status = \pg_result_status($result);
            if ($status === \PGSQL_FATAL_ERROR || $status === \PGSQL_BAD_RESPONSE || $status === \PGSQL_NONFATAL_ERROR) {
                $error ??= $result;
            } else {
                $last = $result;
            }
        }
        if (\pg_connection_status($link) !== \PGSQL_CONNECTION_OK) {
            $reason = $error !== null ? \trim((string) \pg_result_error($error)) : '';
            throw $this->lose(ConnectionLost::afterSend($reason !== '' ? $reason : $this->libpqError('connection broken')));
        }
        $this->transactionOpen = \in_array(\pg_transaction_status($link), self::TX_STATES, true);
        if ($error !== null) {
            throw QueryError::fromResult($error, $sql);
        }
        return new Result($last, $this->config->decodeJson);
    }

    private function enter(): void
    {
        $current = \Weft\current();
        if ($this->busy) {
            throw ConcurrentUse::of('The PostgreSQL connection', $this->holder, $current, 'use Weft\\Client\\Pgsql\\Pool');
        }
        if ($this->transactionOwner !== null && $current !== $this->transactionOwner && $this->inTransaction()) {
            throw ConcurrentUse::of('The PostgreSQL connection', 'the transaction of ' . ConcurrentUse::who($this->transactionOwner), $current, 'use Weft\\Client\\Pgsql\\Pool');
        }
        if ($this->link === null) {
            throw ConnectionLost::beforeSend($this->lostReason ?? 'closed', $this->transactionOpen);
        }
        $this->busy = true;
        $this->holder = $current;
    }

    private function lose(ConnectionLost $error): ConnectionLost
    {
        $this->lostReason = $error->getMessage();
        $this->close();
        return $error;
    }

    private function libpqError(string $fallback): string
    {
        $message = $this->link !== null ? \trim((string) \pg_last_error($this->link)) : '';
        return $message !== '' ? $message : $fallback;
    }

    /**
     * Parameters travel in PostgreSQL's text format.
     *
     * @param array<mixed> $params
     * @return list<?string>
     */
    private static function encodeParams(array $params): array
    {
        $values = [];
        foreach ($params as $key => $value) {
            $values[] = match (true) {
                $value === null => null,
                \is_string($value) => $value,
                \is_int($value) => (string) $value,
                \is_bool($value) => $value ? 't' : 'f',
                \is_float($value) => self::encodeFloat($value),
                $value instanceof \DateTimeInterface => $value->format('Y-m-d H:i:s.uP'),
                $value instanceof \BackedEnum => (string) $value->value,
                $value instanceof \Stringable => (string) $value,
                default => throw new \InvalidArgumentException(\sprintf(
                    'Query parameter %s is a %s; use int, float, string, bool, null or DateTimeInterface '
                    . '(encode arrays yourself, e.g. with json_encode())',
                    \is_int($key) ? '$' . ($key + 1) : '"' . $key . '"',
                    \get_debug_type($value),
                )),
            };
        }
        return $values;
    }

    private static function encodeFloat(float $value): string
    {
        if (\is_nan($value)) {
            return 'NaN';
        }
        if (\is_infinite($value)) {
            return $value > 0 ? 'Infinity' : '-Infinity';
        }
        // var_export() uses serialize_precision (shortest round-trip form), not the 14-digit cast.
        return \var_export($value, true);
    }
}
