<?php

declare(strict_types=1);

namespace Weft\Client\Pgsql;

/** A statement prepared on one connection's server session; valid as long as that connection is. */
final class Statement
{
    private bool $closed = false;

    /** @internal made by Connection::prepare() */
    public function __construct(
        private readonly Connection $connection,
        private readonly string $name,
        private readonly string $sql,
    ) {
    }

    /**
     * @param list<int|float|string|bool|null|\DateTimeInterface|\Stringable|\BackedEnum> $params for $1, $2, ...
     * @throws QueryError|ConnectionLost
     */
    public function execute(array $params = []): Result
    {
        if ($this->closed) {
            throw new \Error(\sprintf('The prepared statement "%s" was closed', $this->name));
        }
        return $this->connection->executePrepared($this->name, $this->sql, $params);
    }

    public function name(): string
    {
        return $this->name;
    }

    public function sql(): string
    {
        return $this->sql;
    }

    /** Frees the statement on the server (DEALLOCATE). */
    public function close(): void
    {
        if ($this->closed) {
            return;
        }
        $this->closed = true;
        if (!$this->connection->isClosed()) {
            $this->connection->query('DEALLOCATE ' . $this->connection->quoteIdentifier($this->name));
        }
    }
}
