<?php

declare(strict_types=1);

namespace Weft\Client\Mysql\Internal;

use Weft\Client\Mysql\Column;

/**
 * Pure encoding and decoding of packet payloads: bytes in, values out (and back). No I/O, so every
 * function here is tested with byte strings alone.
 *
 * Values follow mysqlnd with native types (PDO without ATTR_STRINGIFY_FETCHES): integers -> int
 * (unsigned BIGINT beyond PHP_INT_MAX -> string), FLOAT/DOUBLE -> float, BIT -> int, DECIMAL -> string,
 * NULL -> null, dates, times and YEAR -> strings as the text protocol prints them ("2024-02-29",
 * "0000"), everything else -> string. Checked value for value against PDO in the integration tests.
 *
 * @internal
 */
final class Wire
{
    public const KIND_STRING = 0;
    public const KIND_INT = 1;
    public const KIND_FLOAT = 2;
    public const KIND_UNSIGNED_BIGINT = 3;
    public const KIND_BIT = 4;

    /** MariaDB/MySQL use 31 decimals for "not fixed" (e.g. a FLOAT column without (M,D)). */
    private const NOT_FIXED_DEC = 31;

    private function __construct()
    {
    }

    /** Length-encoded integer at $pos (advanced past it); null for 0xFB (NULL). */
    public static function lenencInt(string $data, int &$pos): ?int
    {
        if (!isset($data[$pos])) {
            throw ProtocolViolation::truncated('length-encoded integer');
        }
        $first = \ord($data[$pos]);
        if ($first < 0xFB) {
            $pos++;
            return $first;
        }
        if ($first === 0xFB) {
            $pos++;
            return null;
        }
        $size = match ($first) { 0xFC => 2, 0xFD => 3, 0xFE => 8, default => 0 };
        if ($size === 0 || \strlen($data) < $pos + 1 + $size) {
            throw ProtocolViolation::truncated('length-encoded integer');
        }
        $value = match ($size) {
            2 => \unpack('v', $data, $pos + 1)[1],
            3 => \ord($data[$pos + 1]) | (\ord($data[$pos + 2]) << 8) | (\ord($data[$pos + 3]) << 16),
            default => \unpack('P', $data, $pos + 1)[1],
        };
        $pos += 1 + $size;
        return $value;
    }

    /** Length-encoded string at $pos (advanced past it); null for 0xFB (NULL). */
    public static function lenencString(string $data, int &$pos): ?string
    {
        $length = self::lenencInt($data, $pos);
        if ($length === null) {
            return null;
        }
        if (\strlen($data) < $pos + $length) {
            throw ProtocolViolation::truncated('length-encoded string');
        }
        $value = \substr($data, $pos, $length);
        $pos += $length;
        return $value;
    }

    public static function encodeLenenc(int $value): string
    {
        if ($value < 0xFB) {
            return \chr($value);
        }
        if ($value <= 0xFFFF) {
            return "\xFC" . \pack('v', $value);
        }
        if ($value <= 0xFFFFFF) {
            return "\xFD" . \substr(\pack('V', $value), 0, 3);
        }
        return "\xFE" . \pack('P', $value);
    }

    /**
     * OK packet (header 0x00, or 0xFE when it ends a result set under CLIENT_DEPRECATE_EOF).
     *
     * @return array{int, int|string, int, int, string} affected rows, last insert id, status, warnings, info
     */
    public static function ok(string $packet): array
    {
        $pos = 1;
        $affected = self::lenencInt($packet, $pos) ?? 0;
        $insertId = self::lenencInt($packet, $pos) ?? 0;
        if ($insertId < 0) {
            $insertId = \sprintf('%u', $insertId); // an unsigned BIGINT id beyond PHP_INT_MAX
        }
        if (\strlen($packet) < $pos + 4) {
            // Pre-4.1 servers omit status and warnings; we never negotiate that, but stay tolerant.
            return [$affected, $insertId, 0, 0, ''];
        }
        $fields = \unpack('vstatus/vwarnings', $packet, $pos);
        return [$affected, $insertId, $fields['status'], $fields['warnings'], (string) \substr($packet, $pos + 4)];
    }

    /**
     * EOF packet (header 0xFE, less than 9 bytes).
     *
     * @return array{int, int} warnings, status
     */
    public static function eof(string $packet): array
    {
        if (\strlen($packet) < 5) {
            return [0, 0];
        }
        $fields = \unpack('vwarnings/vstatus', $packet, 1);
        return [$fields['warnings'], $fields['status']];
    }

    /**
     * ERR packet (header 0xFF). Before the handshake completes there may be no SQLSTATE marker.
     *
     * @return array{int, string, string} code, SQLSTATE, message
     */
    public static function error(string $packet): array
    {
        if (\strlen($packet) < 3) {
            return [0, 'HY000', 'Malformed error packet from the server'];
        }
        $code = \unpack('v', $packet, 1)[1];
        if (($packet[3] ?? '') === '#') {
            return [$code, \substr($packet, 4, 5), (string) \substr($packet, 9)];
        }
        return [$code, 'HY000', (string) \substr($packet, 3)];
    }

    /** Column definition packet (ColumnDefinition41). */
    public static function column(string $packet): Column
    {
        $pos = 0;
        self::lenencString($packet, $pos); // catalog, always "def"
        $schema = self::lenencString($packet, $pos) ?? '';
        $table = self::lenencString($packet, $pos) ?? '';
        $orgTable = self::lenencString($packet, $pos) ?? '';
        $name = self::lenencString($packet, $pos) ?? '';
        $orgName = self::lenencString($packet, $pos) ?? '';
        self::lenencInt($packet, $pos); // length of the fixed fields, 0x0c
        if (\strlen($packet) < $pos + 10) {
            throw ProtocolViolation::truncated('column definition');
        }
        $f = \unpack('vcharset/Vlength/Ctype/vflags/Cdecimals', $packet, $pos);
        return new Column($name, $table, $orgTable, $orgName, $schema, $f['type'], $f['flags'], $f['length'], $f['decimals'], $f['charset']);
    }

    /** How text-protocol values of this column become PHP values (a KIND_* constant). */
    public static function kind(Column $column): int
    {
        return match ($column->type) {
            Protocol::TYPE_TINY, Protocol::TYPE_SHORT, Protocol::TYPE_LONG, Protocol::TYPE_INT24 => self::KIND_INT,
            Protocol::TYPE_LONGLONG => $column->isUnsigned() ? self::KIND_UNSIGNED_BIGINT : self::KIND_INT,
            Protocol::TYPE_FLOAT, Protocol::TYPE_DOUBLE => self::KIND_FLOAT,
            Protocol::TYPE_BIT => self::KIND_BIT,
            default => self::KIND_STRING,
        };
    }

    /**
     * A text-protocol row: one length-encoded string (or 0xFB for NULL) per column.
     *
     * @param list<string> $names
     * @param list<int> $kinds
     * @return array<string, mixed>
     */
    public static function textRow(string $packet, array $names, array $kinds): array
    {
        $row = [];
        $pos = 0;
        foreach ($names as $i => $name) {
            $length = \ord($packet[$pos]);
            if ($length < 0xFB) {
                $value = \substr($packet, $pos + 1, $length);
                $pos += 1 + $length;
            } elseif ($length === 0xFB) {
                $row[$name] = null;
                $pos++;
                continue;
            } else {
                $value = self::lenencString($packet, $pos);
            }
            $kind = $kinds[$i];
            if ($kind === self::KIND_STRING) {
                $row[$name] = $value;
            } elseif ($kind === self::KIND_INT) {
                $row[$name] = (int) $value;
            } elseif ($kind === self::KIND_FLOAT) {
                $row[$name] = (float) $value;
            } elseif ($kind === self::KIND_UNSIGNED_BIGINT) {
                $int = (int) $value;
                $row[$name] = (string) $int === $value ? $int : $value;
            } else {
                $row[$name] = self::bits($value);
            }
        }
        if ($pos !== \strlen($packet)) {
            throw ProtocolViolation::unexpected('as a text row (length mismatch)', $packet);
        }
        return $row;
    }

    /**
     * A binary-protocol row: 0x00, a NULL bitmap offset by 2 bits, then the non-NULL values.
     *
     * @param list<Column> $columns
     * @param list<string> $names
     * @return array<string, mixed>
     */
    public static function binaryRow(string $packet, array $columns, array $names): array
    {
        $row = [];
        $pos = 1 + ((\count($columns) + 9) >> 3);
        foreach ($columns as $i => $column) {
            $bit = $i + 2;
            if ((\ord($packet[1 + ($bit >> 3)]) >> ($bit & 7)) & 1) {
                $row[$names[$i]] = null;
                continue;
            }
            switch ($column->type) {
                case Protocol::TYPE_LONGLONG:
                    $value = \unpack('P', $packet, $pos)[1];
                    if ($value < 0 && ($column->flags & Protocol::FLAG_UNSIGNED)) {
                        $value = \sprintf('%u', $value);
                    }
                    $pos += 8;
                    break;
                case Protocol::TYPE_LONG:
                case Protocol::TYPE_INT24:
                    $value = \unpack('V', $packet, $pos)[1];
                    if ($value > 0x7FFFFFFF && !($column->flags & Protocol::FLAG_UNSIGNED)) {
                        $value -= 0x100000000;
                    }
                    $pos += 4;
                    break;
                case Protocol::TYPE_SHORT:
                    $value = \unpack('v', $packet, $pos)[1];
                    if ($value > 0x7FFF && !($column->flags & Protocol::FLAG_UNSIGNED)) {
                        $value -= 0x10000;
                    }
                    $pos += 2;
                    break;
                case Protocol::TYPE_YEAR:
                    $value = \sprintf('%04d', \unpack('v', $packet, $pos)[1]);
                    $pos += 2;
                    break;
                case Protocol::TYPE_TINY:
                    $value = \ord($packet[$pos]);
                    if ($value > 0x7F && !($column->flags & Protocol::FLAG_UNSIGNED)) {
                        $value -= 0x100;
                    }
                    $pos++;
                    break;
                case Protocol::TYPE_DOUBLE:
                    $value = \unpack('e', $packet, $pos)[1];
                    $pos += 8;
                    break;
                case Protocol::TYPE_FLOAT:
                    $value = self::float(\unpack('g', $packet, $pos)[1], $column->decimals);
                    $pos += 4;
                    break;
                case Protocol::TYPE_DATE:
                case Protocol::TYPE_DATETIME:
                case Protocol::TYPE_TIMESTAMP:
                case Protocol::TYPE_NEWDATE:
                    $length = \ord($packet[$pos]);
                    $value = self::dateTime($column->type, \substr($packet, $pos + 1, $length), $column->decimals);
                    $pos += 1 + $length;
                    break;
                case Protocol::TYPE_TIME:
                    $length = \ord($packet[$pos]);
                    $value = self::time(\substr($packet, $pos + 1, $length), $column->decimals);
                    $pos += 1 + $length;
                    break;
                case Protocol::TYPE_NULL:
                    $value = null;
                    break;
                case Protocol::TYPE_BIT:
                    $value = self::bits(self::lenencString($packet, $pos));
                    break;
                default:
                    $length = \ord($packet[$pos]);
                    if ($length < 0xFB) {
                        $value = \substr($packet, $pos + 1, $length);
                        $pos += 1 + $length;
                    } else {
                        $value = self::lenencString($packet, $pos);
                    }
            }
            $row[$names[$i]] = $value;
        }
        if ($pos !== \strlen($packet)) {
            throw ProtocolViolation::unexpected('as a binary row (length mismatch)', $packet);
        }
        return $row;
    }

    /**
     * COM_STMT_EXECUTE payload: statement id, no cursor, one iteration, then the NULL bitmap, the types
     * (sent every time: "new params bound") and the values.
     *
     * @param array<int, mixed> $params
     */
    public static function execute(int $statementId, array $params): string
    {
        $head = \pack('CVCV', Protocol::COM_STMT_EXECUTE, $statementId, 0, 1);
        if ($params === []) {
            return $head;
        }
        $nulls = \array_fill(0, (\count($params) + 7) >> 3, 0);
        $types = '';
        $values = '';
        $i = 0;
        foreach ($params as $value) {
            if ($value instanceof \BackedEnum) {
                $value = $value->value;
            } elseif ($value instanceof \Stringable) {
                $value = (string) $value;
            }
            if (\is_int($value)) {
                $types .= "\x08\x00";
                $values .= \pack('P', $value);
            } elseif (\is_string($value)) {
                $types .= "\xFD\x00";
                $length = \strlen($value);
                $values .= ($length < 0xFB ? \chr($length) : self::encodeLenenc($length)) . $value;
            } elseif ($value === null) {
                $nulls[$i >> 3] |= 1 << ($i & 7);
                $types .= "\x06\x00";
            } elseif (\is_float($value)) {
                $types .= "\x05\x00";
                $values .= \pack('e', $value);
            } elseif (\is_bool($value)) {
                $types .= "\x01\x00";
                $values .= $value ? "\x01" : "\x00";
            } elseif ($value instanceof \DateTimeInterface) {
                $types .= "\x0C\x00";
                $values .= self::encodeDateTime($value);
            } else {
                throw new \InvalidArgumentException(\sprintf(
                    'Parameter %d: cannot bind a value of type %s (int, float, string, bool, null, '
                    . 'DateTimeInterface, BackedEnum or Stringable expected)',
                    $i + 1,
                    \get_debug_type($value),
                ));
            }
            $i++;
        }
        return $head . \pack('C*', ...$nulls) . "\x01" . $types . $values;
    }

    /** DATETIME in binary form: length 7 (no fraction) or 11 (with microseconds), in the value's own time zone. */
    public static function encodeDateTime(\DateTimeInterface $value): string
    {
        [$year, $month, $day, $hour, $minute, $second, $micro] = \array_map('intval', \explode(' ', $value->format('Y n j G i s u')));
        if ($micro === 0) {
            return \pack('CvCCCCC', 7, $year, $month, $day, $hour, $minute, $second);
        }
        return \pack('CvCCCCCV', 11, $year, $month, $day, $hour, $minute, $second, $micro);
    }

    /** BIT(n) bytes, big-endian, as an integer (a decimal string beyond PHP_INT_MAX, like mysqlnd). */
    public static function bits(string $bytes): int|string
    {
        $value = \unpack('J', \str_pad(\substr($bytes, -8), 8, "\0", \STR_PAD_LEFT))[1];
        return $value < 0 ? \sprintf('%u', $value) : $value;
    }

    /**
     * A binary FLOAT is a 4-byte single; widened to double it shows noise digits (1.1 -> 1.100000023...).
     * Like mysqlnd: round to the column's decimals, or to 6 significant digits (FLT_DIG) when not fixed.
     */
    public static function float(float $value, int $decimals): float
    {
        if (!\is_finite($value)) {
            return $value;
        }
        if ($decimals >= self::NOT_FIXED_DEC) {
            return (float) \sprintf('%.5e', $value);
        }
        return \round($value, $decimals);
    }

    /** Binary DATE / DATETIME / TIMESTAMP (length 0, 4, 7 or 11) -> "Y-m-d[ H:i:s[.f]]". */
    public static function dateTime(int $type, string $bytes, int $decimals): string
    {
        $length = \strlen($bytes);
        $year = $month = $day = $hour = $minute = $second = $micro = 0;
        if ($length >= 4) {
            ['y' => $year, 'm' => $month, 'd' => $day] = \unpack('vy/Cm/Cd', $bytes);
        }
        if ($length >= 7) {
            ['h' => $hour, 'i' => $minute, 's' => $second] = \unpack('Ch/Ci/Cs', $bytes, 4);
        }
        if ($length >= 11) {
            $micro = \unpack('V', $bytes, 7)[1];
        }
        $date = \sprintf('%04d-%02d-%02d', $year, $month, $day);
        if ($type === Protocol::TYPE_DATE || $type === Protocol::TYPE_NEWDATE) {
            return $date;
        }
        return $date . \sprintf(' %02d:%02d:%02d', $hour, $minute, $second) . self::fraction($micro, $decimals);
    }

    /** Binary TIME (length 0, 8 or 12) -> "[-]H:i:s[.f]", hours beyond 24 included (TIME spans +-838 h). */
    public static function time(string $bytes, int $decimals): string
    {
        if (\strlen($bytes) < 8) {
            return '00:00:00' . self::fraction(0, $decimals);
        }
        $f = \unpack('Cneg/Vdays/Ch/Ci/Cs', $bytes);
        $micro = \strlen($bytes) >= 12 ? \unpack('V', $bytes, 8)[1] : 0;
        return \sprintf('%s%02d:%02d:%02d', $f['neg'] ? '-' : '', $f['days'] * 24 + $f['h'], $f['i'], $f['s'])
            . self::fraction($micro, $decimals);
    }

    /** Fractional seconds as the text protocol prints them: as many digits as the column declares. */
    private static function fraction(int $micro, int $decimals): string
    {
        if ($decimals > 0 && $decimals <= 6) {
            return '.' . \substr(\sprintf('%06d', $micro), 0, $decimals);
        }
        if ($decimals === self::NOT_FIXED_DEC && $micro !== 0) {
            return '.' . \sprintf('%06d', $micro);
        }
        return '';
    }
}
