<?php

declare(strict_types=1);

namespace Weft\Client\Mysql;

/**
 * The complete reply to one statement: rows (read in full before the call returned) or the counts of a
 * statement without a result set. Iterating yields the remaining rows as associative arrays.
 *
 * Several statements (CALL, multi-statements) give a chain: nextResult() moves along it.
 *
 * @implements \IteratorAggregate<int, array<string, mixed>>
 */
final class Result implements \IteratorAggregate, \Countable
{
    private int $cursor = 0;
    private Result|QueryError|null $next = null;

    /**
     * @internal built by Connection
     * @param list<Column> $columns
     * @param list<array<string, mixed>> $rows
     */
    public function __construct(
        private readonly array $columns,
        private readonly array $rows,
        private readonly int $affectedRows,
        private readonly int|string $lastInsertId,
        private readonly int $warnings,
        private readonly string $info = '',
    ) {
    }

    /** The next row as column name => value, or null after the last one. */
    public function fetch(): ?array
    {
        return $this->rows[$this->cursor++] ?? null;
    }

    /** Same as fetch(): the next row or null. */
    public function fetchOne(): ?array
    {
        return $this->rows[$this->cursor++] ?? null;
    }

    /** @return list<array<string, mixed>> the remaining rows */
    public function fetchAll(): array
    {
        $cursor = $this->cursor;
        $this->cursor = \count($this->rows);
        return $cursor === 0 ? $this->rows : \array_slice($this->rows, $cursor);
    }

    /**
     * One column of the next row, by position or name; null after the last row (or when the value is NULL).
     */
    public function fetchColumn(int|string $column = 0): mixed
    {
        $name = \is_int($column) ? ($this->columns[$column] ?? null)?->name : $column;
        if ($name === null || (\is_string($column) && !$this->hasColumn($column))) {
            throw new \OutOfRangeException(\sprintf('The result has no column %s (columns: %s)', \is_int($column) ? "#$column" : "\"$column\"", \implode(', ', $this->columnNames())));
        }
        $row = $this->rows[$this->cursor++] ?? null;
        return $row === null ? null : $row[$name];
    }

    /** Rows in the result set, or rows changed by an INSERT/UPDATE/DELETE (like PDOStatement::rowCount()). */
    public function rowCount(): int
    {
        return $this->columns === [] ? $this->affectedRows : \count($this->rows);
    }

    /** Rows changed (matched rows are not counted when unchanged), or the rows of a result set. */
    public function affectedRows(): int
    {
        return $this->columns === [] ? $this->affectedRows : \count($this->rows);
    }

    /** The AUTO_INCREMENT value of the first row inserted, 0 if none (a string only beyond PHP_INT_MAX). */
    public function lastInsertId(): int|string
    {
        return $this->lastInsertId;
    }

    /** How many warnings the statement raised (SHOW WARNINGS lists them). */
    public function warnings(): int
    {
        return $this->warnings;
    }

    /** The server's human-readable info, e.g. "Rows matched: 3  Changed: 1  Warnings: 0". */
    public function info(): string
    {
        return $this->info;
    }

    /** @return list<Column> empty for a statement without a result set */
    public function columns(): array
    {
        return $this->columns;
    }

    /** @return list<string> */
    public function columnNames(): array
    {
        $names = [];
        foreach ($this->columns as $column) {
            $names[] = $column->name;
        }
        return $names;
    }

    /** Whether the statement produced a result set (even an empty one), as SELECT does. */
    public function hasResultSet(): bool
    {
        return $this->columns !== [];
    }

    /**
     * The result of the next statement (CALL, multi-statements), or null after the last.
     *
     * @throws QueryError when that statement failed (the statements after it did not run)
     */
    public function nextResult(): ?Result
    {
        if ($this->next instanceof QueryError) {
            throw $this->next;
        }
        return $this->next;
    }

    /** @return \Generator<int, array<string, mixed>> the remaining rows; iterating consumes them */
    public function getIterator(): \Generator
    {
        $rows = $this->rows;
        $count = \count($rows);
        while ($this->cursor < $count) {
            yield $this->cursor => $rows[$this->cursor++];
        }
    }

    public function count(): int
    {
        return $this->rowCount();
    }

    /** @internal Connection builds the chain */
    public function setNext(Result|QueryError $next): void
    {
        $this->next = $next;
    }

    private function hasColumn(string $name): bool
    {
        foreach ($this->columns as $column) {
            if ($column->name === $name) {
                return true;
            }
        }
        return false;
    }
}
