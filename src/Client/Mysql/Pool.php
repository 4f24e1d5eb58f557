<?php

declare(strict_types=1);

namespace Weft\Client\Mysql;

use Weft\Pool\Pool as ConnectionPool;
use Weft\Pool\PoolOptions;
use Weft\Socket\ConnectException;

/**
 * MySQL connections shared by many coroutines, on top of Weft\Pool\Pool.
 *
 * - query()/execute() borrow a connection for one statement; transaction() holds one for the whole
 *   transaction; use() for several statements that must share a connection (session variables,
 *   temporary tables).
 * - A connection idle longer than checkAfterIdle is pinged before it is handed out; one the server
 *   closed meanwhile is also found before the command is written (Connection::query()), and then the
 *   command runs again on a fresh connection. A command that was in flight when its connection broke
 *   is never repeated: it may have been applied.
 * - Opening a connection is retried with a short backoff while the server refuses connections or is
 *   shutting down (a restart), until the borrow timeout: requests wait for the server to come back
 *   instead of failing in the gap. Wrong credentials and other server answers fail at once.
 * - A connection is not reused when it is broken or a use() task left a transaction open: it is
 *   closed, which rolls the transaction back on the server.
 */
final class Pool
{
    /** Server errors during the handshake that mean "the server is going away or not ready yet". */
    private const RETRYABLE_CONNECT_ERRORS = [1053 => true, 1927 => true];

    public readonly Config $config;
    /** @var ConnectionPool<Connection> */
    private readonly ConnectionPool $pool;
    private readonly float $connectRetryWindow;
    private int $connectRetries = 0;

    public function __construct(Config|string $config, ?PoolOptions $options = null)
    {
        $this->config = \is_string($config) ? Config::fromUrl($config) : $config;
        $options ??= PoolOptions::defaults();
        $this->connectRetryWindow = $options->borrowTimeout;
        $this->pool = new ConnectionPool(
            connect: $this->connect(...),
            close: static fn (Connection $connection) => $connection->close(),
            check: static fn (Connection $connection): bool => $connection->ping(),
            options: $options,
            reusable: static fn (Connection $connection): bool => $connection->isUsable() && !$connection->inTransaction(),
        );
    }

    /** @param list<mixed> $params see Connection::query() */
    public function query(string $sql, array $params = []): Result
    {
        return $this->use(static fn (Connection $connection): Result => $connection->query($sql, $params));
    }

    /** @param list<mixed> $params */
    public function execute(string $sql, array $params = []): Result
    {
        return $this->query($sql, $params);
    }

    /**
     * Runs $fn($connection) in a transaction on one connection held throughout: commit when it returns,
     * rollback when it throws.
     *
     * @template T
     * @param \Closure(Connection): T $fn
     * @return T
     */
    public function transaction(\Closure $fn): mixed
    {
        return $this->use(static fn (Connection $connection): mixed => $connection->transaction($fn));
    }

    /**
     * Runs $fn with one connection for its whole duration. When the connection turns out dead before
     * $fn's first command was sent, $fn runs again on a fresh one; never after a command completed.
     *
     * @template T
     * @param \Closure(Connection): T $fn
     * @return T
     */
    public function use(\Closure $fn): mixed
    {
        return $this->pool->use(static function (Connection $connection) use ($fn): mixed {
            $before = $connection->completedCommands();
            try {
                return $fn($connection);
            } catch (ConnectionLost $e) {
                throw $connection->completedCommands() > $before ? ConnectionLost::afterEarlierCommands($e) : $e;
            }
        });
    }

    /**
     * @return array{in_use: int, idle: int, waiting: int, total: int, connecting: int, created: int,
     *               discarded: int, evicted: int, timeouts: int, min: int, max: int, closed: bool,
     *               connect_retries: int}
     */
    public function stats(): array
    {
        return $this->pool->stats() + ['connect_retries' => $this->connectRetries];
    }

    /** Closes idle connections now and the others when they come back; further use throws PoolClosed. */
    public function close(): void
    {
        $this->pool->close();
    }

    private function connect(): Connection
    {
        $deadline = \hrtime(true) / 1e9 + $this->connectRetryWindow;
        $delay = 0.02;
        while (true) {
            try {
                return Connection::connect($this->config);
            } catch (ConnectException|QueryError $e) {
                if ($e instanceof QueryError && !isset(self::RETRYABLE_CONNECT_ERRORS[$e->getCode()])) {
                    throw $e;
                }
                $left = $deadline - \hrtime(true) / 1e9;
                if ($left <= 0) {
                    throw $e;
                }
                $this->connectRetries++;
                \Weft\sleep(\min($delay, $left));
                $delay = \min($delay * 2, 0.5);
            }
        }
    }
}
