<?php

declare(strict_types=1);

namespace Weft\Client\Pgsql;

use Weft\Pool\Pool as ConnectionPool;
use Weft\Pool\PoolOptions;

/**
 * PostgreSQL connections shared by the coroutines of one worker, on Weft\Pool\Pool.
 *
 * - A connection that broke is discarded; a statement found to have failed before anything reached the
 *   server (dead idle connection after a server restart or pg_terminate_backend) runs again, once, on a
 *   fresh connection. A statement that may have run is never repeated: its ConnectionLost reaches you.
 * - A connection comes back only if it is reusable: not closed, and no transaction left open (a task that
 *   called begin() and forgot commit() loses its connection rather than leaking the transaction).
 * - Connections idle longer than the options' checkAfterIdle are pinged before they are handed out.
 */
final class Pool
{
    /** @var ConnectionPool<Connection> */
    private readonly ConnectionPool $pool;
    private readonly Config $config;

    public function __construct(Config|string $config, ?PoolOptions $options = null)
    {
        $this->config = $config = \is_string($config) ? Config::fromUrl($config) : $config;
        $this->pool = new ConnectionPool(
            static fn (): Connection => Connection::connect($config),
            static fn (Connection $connection) => $connection->close(),
            static fn (Connection $connection): bool => $connection->ping(),
            $options,
            static fn (Connection $connection): bool => $connection->isReusable(),
        );
    }

    /**
     * Runs $task with a connection of its own and gives the connection back afterwards.
     *
     * @template T
     * @param \Closure(Connection): T $task
     * @return T
     */
    public function use(\Closure $task): mixed
    {
        return $this->pool->use($task);
    }

    /**
     * @param list<mixed> $params
     * @throws QueryError|ConnectionLost|\Weft\Socket\ConnectException|\Weft\Pool\PoolExhausted
     */
    public function query(string $sql, array $params = []): Result
    {
        return $this->pool->use(static fn (Connection $connection): Result => $connection->query($sql, $params));
    }

    /**
     * Runs $task in a transaction on one connection: committed when it returns, rolled back when it throws.
     *
     * @template T
     * @param \Closure(Connection): T $task
     * @return T
     */
    public function transaction(\Closure $task): mixed
    {
        return $this->pool->use(static fn (Connection $connection): mixed => $connection->transaction($task));
    }

    /** For longer use than one closure; give it back with release() (or discard() if it broke). */
    public function borrow(?float $timeout = null): Connection
    {
        return $this->pool->borrow($timeout);
    }

    public function release(Connection $connection): void
    {
        $this->pool->release($connection);
    }

    public function discard(Connection $connection): void
    {
        $this->pool->discard($connection);
    }

    /** @return array<string, int|bool> see Weft\Pool\Pool::stats() */
    public function stats(): array
    {
        return $this->pool->stats();
    }

    public function config(): Config
    {
        return $this->config;
    }

    public function close(): void
    {
        $this->pool->close();
    }
}
