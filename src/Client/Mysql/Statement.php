<?php

declare(strict_types=1);

namespace Weft\Client\Mysql;

/**
 * A server-side prepared statement ("?" placeholders), executed with the binary protocol: parameters
 * travel typed (int, float, string, bool, null, DateTimeInterface as DATETIME) and are never spliced
 * into SQL text. It belongs to the connection that prepared it and lives until close() or the end of
 * that connection.
 */
final class Statement
{
    private bool $closed = false;

    /**
     * @internal created by Connection::prepare()
     * @param list<Column> $columns
     */
    public function __construct(
        private readonly Connection $connection,
        public readonly int $id,
        public readonly int $paramCount,
        private readonly array $columns,
        public readonly string $sql,
    ) {
    }

    /**
     * @param list<mixed> $params one value per "?", in order
     * @throws QueryError|ConnectionLost|\InvalidArgumentException
     */
    public function execute(array $params = []): Result
    {
        if ($this->closed) {
            throw new \LogicException('The prepared statement was closed');
        }
        return $this->connection->executeStatement($this, $params);
    }

    /** Frees the statement on the server. Idempotent; a no-op once the connection is gone. */
    public function close(): void
    {
        if ($this->closed) {
            return;
        }
        $this->closed = true;
        $this->connection->closeStatement($this);
    }

    public function isClosed(): bool
    {
        return $this->closed;
    }

    /** @return list<Column> the result columns as known at prepare time */
    public function columns(): array
    {
        return $this->columns;
    }

    public function connection(): Connection
    {
        return $this->connection;
    }
}
