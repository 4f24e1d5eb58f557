<?php

declare(strict_types=1);

namespace Weft\Client\Pgsql;

/**
 * The rows of one statement, read from libpq's result as they are asked for. Values are converted from
 * the columns' types: int2/int4/int8/oid -> int, float4/float8 -> float, bool -> bool, json/jsonb -> string
 * (or decoded, with Config::withDecodeJson()), NULL -> null; everything else (numeric, dates, text,
 * arrays, ...) stays in PostgreSQL's text form, so nothing loses precision.
 *
 * Rows are arrays keyed by column name (a later column of the same name wins, as in PDO).
 *
 * @implements \IteratorAggregate<int, array<string, mixed>>
 */
final class Result implements \IteratorAggregate, \Countable
{
    private const INT = 1;
    private const FLOAT = 2;
    private const BOOL = 3;
    private const JSON = 4;

    /** Type OIDs from pg_type.h: they are fixed across PostgreSQL versions. */
    private const TYPES = [
        16 => self::BOOL,     // bool
        20 => self::INT,      // int8
        21 => self::INT,      // int2
        23 => self::INT,      // int4
        26 => self::INT,      // oid
        700 => self::FLOAT,   // float4
        701 => self::FLOAT,   // float8
        114 => self::JSON,    // json
        3802 => self::JSON,   // jsonb
    ];

    /** @var array<string, int> column name => conversion, only for columns that need one */
    private array $casts = [];
    /** @var array<int, int> column position => conversion */
    private array $castsByIndex = [];
    /** @var list<string> */
    private array $fields = [];
    private int $rows;

    /** @internal built by Connection */
    public function __construct(private readonly ?\PgSql\Result $result, private readonly bool $decodeJson = false)
    {
        if ($result === null) {
            $this->rows = 0;
            return;
        }
        $this->rows = \pg_num_rows($result);
        $count = \pg_num_fields($result);
        for ($i = 0; $i < $count; $i++) {
            $name = \pg_field_name($result, $i);
            $this->fields[] = $name;
            $cast = self::TYPES[(int) \pg_field_type_oid($result, $i)] ?? null;
            if ($cast === self::JSON && !$decodeJson) {
                $cast = null;
            }
            if ($cast !== null) {
                $this->casts[$name] = $cast;
                $this->castsByIndex[$i] = $cast;
            } else {
                unset($this->casts[$name]);
            }
        }
    }

    /** @return list<array<string, mixed>> every row */
    public function fetchAll(): array
    {
        if ($this->rows === 0) {
            return [];
        }
        $rows = \pg_fetch_all($this->result, \PGSQL_ASSOC);
        if ($this->casts !== []) {
            foreach ($rows as &$row) {
                $row = $this->convert($row);
            }
            unset($row);
        }
        return $rows;
    }

    /** @return array<string, mixed>|null the first row, or null when there is none */
    public function fetchOne(): ?array
    {
        return $this->row(0);
    }

    /**
     * One column of every row.
     *
     * @param int|string $column position (from 0) or name
     * @return list<mixed>
     */
    public function fetchColumn(int|string $column = 0): array
    {
        $index = $this->columnIndex($column);
        if ($this->rows === 0) {
            return [];
        }
        $values = \pg_fetch_all_columns($this->result, $index);
        $cast = $this->castsByIndex[$index] ?? null;
        if ($cast !== null) {
            foreach ($values as &$value) {
                if ($value !== null) {
                    $value = $this->cast($cast, $value);
                }
            }
            unset($value);
        }
        return $values;
    }

    /** The first column of the first row (null when there is no row), e.g. for SELECT count(*). */
    public function fetchScalar(): mixed
    {
        $row = $this->row(0, \PGSQL_NUM);
        return $row === null ? null : $row[0];
    }

    /** Rows changed by INSERT, UPDATE, DELETE, MERGE (for SELECT: rows returned). */
    public function affectedRows(): int
    {
        return $this->result === null ? 0 : \pg_affected_rows($this->result);
    }

    /** The command tag, e.g. "INSERT 0 1", "UPDATE 3", "SELECT 2", "BEGIN". */
    public function command(): string
    {
        return $this->result === null ? '' : (string) \pg_result_status($this->result, \PGSQL_STATUS_STRING);
    }

    /** @return list<string> the column names, in order */
    public function fields(): array
    {
        return $this->fields;
    }

    /** Number of rows. */
    public function count(): int
    {
        return $this->rows;
    }

    public function getIterator(): \Generator
    {
        for ($i = 0; $i < $this->rows; $i++) {
            yield $i => $this->row($i);
        }
    }

    /** @return array<mixed>|null */
    private function row(int $index, int $mode = \PGSQL_ASSOC): ?array
    {
        if ($index >= $this->rows) {
            return null;
        }
        $row = \pg_fetch_array($this->result, $index, $mode);
        if ($row === false) {
            return null;
        }
        if ($this->casts === []) {
            return $row;
        }
        if ($mode === \PGSQL_ASSOC) {
            return $this->convert($row);
        }
        foreach ($this->castsByIndex as $i => $cast) {
            if ($row[$i] !== null) {
                $row[$i] = $this->cast($cast, $row[$i]);
            }
        }
        return $row;
    }

    /** @param array<string, ?string> $row */
    private function convert(array $row): array
    {
        foreach ($this->casts as $name => $cast) {
            $value = $row[$name];
            if ($value !== null) {
                $row[$name] = $this->cast($cast, $value);
            }
        }
        return $row;
    }

    private function cast(int $cast, string $value): mixed
    {
        return match ($cast) {
            self::INT => (int) $value,
            self::BOOL => $value === 't',
            self::FLOAT => match ($value) {
                'NaN' => \NAN,
                'Infinity' => \INF,
                '-Infinity' => -\INF,
                default => (float) $value,
            },
            self::JSON => \json_decode($value, true, 512, \JSON_THROW_ON_ERROR | \JSON_BIGINT_AS_STRING),
        };
    }

    private function columnIndex(int|string $column): int
    {
        if (\is_int($column)) {
            if (!isset($this->fields[$column])) {
                throw new \OutOfRangeException(\sprintf('There is no column %d (the result has %d)', $column, \count($this->fields)));
            }
            return $column;
        }
        $index = \array_search($column, $this->fields, true);
        if ($index === false) {
            throw new \OutOfRangeException(\sprintf('There is no column "%s" (columns: %s)', $column, \implode(', ', $this->fields)));
        }
        return $index;
    }
}
