<?php

declare(strict_types=1);

namespace Weft\Client\Mysql;

use Weft\Client\Mysql\Internal\Protocol;

/** Metadata of one result column, as sent by the server (Protocol::ColumnDefinition41). */
final class Column
{
    public function __construct(
        /** The column's name or alias: the key in fetched rows. */
        public readonly string $name,
        public readonly string $table = '',
        public readonly string $orgTable = '',
        public readonly string $orgName = '',
        public readonly string $schema = '',
        /** One of the MySQL column types (3 = LONG, 253 = VAR_STRING, ...; see typeName()). */
        public readonly int $type = Protocol::TYPE_VAR_STRING,
        public readonly int $flags = 0,
        /** Maximum display length in bytes. */
        public readonly int $length = 0,
        /** Digits after the point (DECIMAL, FLOAT, DOUBLE) or fractional seconds digits (DATETIME, TIME). */
        public readonly int $decimals = 0,
        /** Collation id of the column's values (63 = binary). */
        public readonly int $charset = 0,
    ) {
    }

    public function typeName(): string
    {
        return Protocol::TYPE_NAMES[$this->type] ?? 'UNKNOWN(' . $this->type . ')';
    }

    public function isUnsigned(): bool
    {
        return ($this->flags & Protocol::FLAG_UNSIGNED) !== 0;
    }

    public function isNullable(): bool
    {
        return ($this->flags & Protocol::FLAG_NOT_NULL) === 0;
    }

    public function isPrimaryKey(): bool
    {
        return ($this->flags & Protocol::FLAG_PRIMARY_KEY) !== 0;
    }

    public function isAutoIncrement(): bool
    {
        return ($this->flags & Protocol::FLAG_AUTO_INCREMENT) !== 0;
    }

    /** Binary data (BLOB, BINARY, VARBINARY, BIT) rather than text in a character set. */
    public function isBinary(): bool
    {
        return $this->charset === 63;
    }
}
