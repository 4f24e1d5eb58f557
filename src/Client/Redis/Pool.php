<?php

declare(strict_types=1);

namespace Weft\Client\Redis;

use Closure;
use Weft\Client\Redis\Internal\ScanAll;
use Weft\Pool\Pool as ConnectionPool;
use Weft\Pool\PoolOptions;

/**
 * Redis through a Weft\Pool\Pool of Connections: every command borrows a connection, runs, and gives it
 * back, so any number of coroutines can share one Pool. A command that finds its connection dead before
 * anything was sent runs again, once, on a fresh connection (e.g. after a server restart).
 *
 * For several commands on one connection (WATCH, then reads, then transaction()), use use().
 */
final class Pool
{
    use Commands;
    use ScanAll;

    public readonly Config $config;
    /** @var ConnectionPool<Connection> */
    private readonly ConnectionPool $pool;

    public function __construct(Config|string $config, ?PoolOptions $options = null)
    {
        $this->config = \is_string($config) ? Config::fromUrl($config) : $config;
        $settings = $this->config;
        $this->pool = new ConnectionPool(
            static fn (): Connection => Connection::connect($settings),
            static function (Connection $connection): void {
                $connection->close();
            },
            static fn (Connection $connection): bool => $connection->ping() === 'PONG',
            $options,
            static fn (Connection $connection): bool => $connection->isReusable(),
        );
    }

    public function command(string|int|float ...$args): mixed
    {
        return $this->pool->use(static fn (Connection $connection): mixed => $connection->command(...$args));
    }

    /** @internal see Commands::call() */
    public function call(array $args, ?string $decode = null, ?float $block = null): mixed
    {
        return $this->pool->use(static fn (Connection $connection): mixed => $connection->call($args, $decode, $block));
    }

    /**
     * @param Closure(Pipeline): mixed $fn
     * @return list<mixed>
     * @see Connection::pipeline()
     */
    public function pipeline(Closure $fn): array
    {
        return $this->pool->use(static fn (Connection $connection): array => $connection->pipeline($fn));
    }

    /**
     * @param Closure(Transaction): mixed $fn
     * @return list<mixed>
     * @see Connection::transaction()
     */
    public function transaction(Closure $fn): array
    {
        return $this->pool->use(static fn (Connection $connection): array => $connection->transaction($fn));
    }

    /**
     * Runs $task with one connection for its whole duration (for WATCH, or many commands in a row).
     * Like Weft\Pool\Pool::use(): retried on a fresh connection (at most four times, pausing 0.05–0.2 s before the later ones) only when nothing was sent.
     *
     * @template R
     * @param Closure(Connection): R $task
     * @return R
     */
    public function use(Closure $task): mixed
    {
        return $this->pool->use($task);
    }

    /** @return array<string, int|bool> see Weft\Pool\Pool::stats() */
    public function stats(): array
    {
        return $this->pool->stats();
    }

    public function close(): void
    {
        $this->pool->close();
    }
}
