<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Client\Mysql;

use PHPUnit\Framework\TestCase;
use Weft\Client\Mysql\Column;
use Weft\Client\Mysql\Internal\Protocol;
use Weft\Client\Mysql\Internal\ProtocolViolation;
use Weft\Client\Mysql\Internal\Wire;

final class WireTest extends TestCase
{
    public function testLengthEncodedIntegersAtEveryBoundary(): void
    {
        $cases = [0 => "\x00", 250 => "\xFA", 251 => "\xFC\xFB\x00", 0xFFFF => "\xFC\xFF\xFF", 0x10000 => "\xFD\x00\x00\x01",
            0xFFFFFF => "\xFD\xFF\xFF\xFF", 0x1000000 => "\xFE\x00\x00\x00\x01\x00\x00\x00\x00", 1 << 40 => "\xFE\x00\x00\x00\x00\x00\x01\x00\x00"];
        foreach ($cases as $value => $bytes) {
            self::assertSame(\bin2hex($bytes), \bin2hex(Wire::encodeLenenc($value)), (string) $value);
            $pos = 0;
            self::assertSame($value, Wire::lenencInt($bytes . 'rest', $pos));
            self::assertSame(\strlen($bytes), $pos);
        }
        $pos = 0;
        self::assertNull(Wire::lenencInt("\xFB", $pos), '0xFB is NULL');
        $pos = 0;
        self::assertSame('abc', Wire::lenencString("\x03abcd", $pos));
        self::assertSame(4, $pos);
        $this->expectException(ProtocolViolation::class);
        $pos = 0;
        Wire::lenencString("\x05abc", $pos);
    }

    public function testOkEofAndErrorPackets(): void
    {
        self::assertSame([3, 7, 0x0003, 1, 'Records: 3'], Wire::ok("\x00\x03\x07\x03\x00\x01\x00Records: 3"));
        self::assertSame([1, 70000, 2, 0, ''], Wire::ok("\x00\x01\xFD\x70\x11\x01\x02\x00\x00\x00"));
        self::assertSame([0, '18446744073709551615', 0, 0, ''], Wire::ok("\x00\x00\xFE\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\x00\x00\x00\x00"));
        self::assertSame([2, 0x0022], Wire::eof("\xFE\x02\x00\x22\x00"));
        self::assertSame([1064, '42000', 'You have an error'], Wire::error("\xFF\x28\x04#42000You have an error"));
        self::assertSame([1040, 'HY000', 'Too many connections'], Wire::error("\xFF\x10\x04Too many connections"), 'no SQLSTATE before the handshake');
    }

    public function testColumnDefinition(): void
    {
        $column = Wire::column(self::columnPacket('id', Protocol::TYPE_LONG, Protocol::FLAG_NOT_NULL | Protocol::FLAG_PRIMARY_KEY | Protocol::FLAG_UNSIGNED, 0, 'users', 'user_id'));
        self::assertSame(['id', 'users', 'user_id', 'weft', Protocol::TYPE_LONG, 'LONG', 63], [
            $column->name, $column->table, $column->orgName, $column->schema, $column->type, $column->typeName(), $column->charset,
        ]);
        self::assertTrue($column->isUnsigned());
        self::assertTrue($column->isPrimaryKey());
        self::assertFalse($column->isNullable());
        self::assertTrue($column->isBinary());
    }

    public function testTextRows(): void
    {
        $columns = [
            new Column('i', type: Protocol::TYPE_LONG), new Column('s', type: Protocol::TYPE_VAR_STRING),
            new Column('n', type: Protocol::TYPE_LONG), new Column('d', type: Protocol::TYPE_DOUBLE),
            new Column('dec', type: Protocol::TYPE_NEWDECIMAL), new Column('u', type: Protocol::TYPE_LONGLONG, flags: Protocol::FLAG_UNSIGNED),
            new Column('u2', type: Protocol::TYPE_LONGLONG, flags: Protocol::FLAG_UNSIGNED), new Column('b', type: Protocol::TYPE_BIT),
            new Column('long', type: Protocol::TYPE_BLOB), new Column('y', type: Protocol::TYPE_YEAR),
        ];
        $long = \str_repeat('z', 300);
        $packet = "\x02-7" . "\x05hello" . "\xFB" . "\x041.25" . "\x0512.50" . "\x1418446744073709551615" . "\x0242"
            . "\x02\x01\x02" . "\xFC\x2C\x01" . $long . "\x042024";
        $names = \array_map(static fn (Column $c): string => $c->name, $columns);
        $kinds = \array_map(Wire::kind(...), $columns);
        self::assertSame(
            ['i' => -7, 's' => 'hello', 'n' => null, 'd' => 1.25, 'dec' => '12.50', 'u' => '18446744073709551615', 'u2' => 42, 'b' => 258, 'long' => $long, 'y' => '2024'],
            Wire::textRow($packet, $names, $kinds),
        );
        $this->expectException(ProtocolViolation::class);
        Wire::textRow("\x011\x012", ['a'], [Wire::KIND_INT]);
    }

    public function testBinaryRowsWithANullBitmapAcrossBytes(): void
    {
        $columns = [
            new Column('bigneg', type: Protocol::TYPE_LONGLONG), new Column('bigu', type: Protocol::TYPE_LONGLONG, flags: Protocol::FLAG_UNSIGNED),
            new Column('long', type: Protocol::TYPE_LONG), new Column('short', type: Protocol::TYPE_SHORT),
            new Column('tiny', type: Protocol::TYPE_TINY), new Column('tinyu', type: Protocol::TYPE_TINY, flags: Protocol::FLAG_UNSIGNED),
            new Column('null', type: Protocol::TYPE_LONG), new Column('double', type: Protocol::TYPE_DOUBLE),
            new Column('float', type: Protocol::TYPE_FLOAT, decimals: 31), new Column('date', type: Protocol::TYPE_DATE),
            new Column('dt', type: Protocol::TYPE_DATETIME, decimals: 3), new Column('time', type: Protocol::TYPE_TIME),
            new Column('zero', type: Protocol::TYPE_DATETIME), new Column('str', type: Protocol::TYPE_VAR_STRING),
            new Column('year', type: Protocol::TYPE_YEAR), new Column('bit', type: Protocol::TYPE_BIT),
        ];
        // 16 columns: bitmap of (16 + 9) >> 3 = 3 bytes; column 6 ("null") is bit 8: byte 1, bit 0.
        $packet = "\x00" . "\x00\x01\x00"
            . \pack('P', -5) . \pack('P', -1) . \pack('V', 0xFFFFFFFE) . \pack('v', 0x8000) . "\xFF" . "\xFF"
            . \pack('e', 2.5) . \pack('g', 1.1)
            . "\x04" . \pack('vCC', 2024, 2, 29)
            . "\x0B" . \pack('vCCCCCV', 2024, 2, 29, 13, 14, 15, 123456)
            . "\x08" . \pack('CVCCC', 1, 1, 2, 3, 4)
            . "\x00"
            . "\x03abc" . \pack('v', 1999) . "\x02\x01\x00";
        $names = \array_map(static fn (Column $c): string => $c->name, $columns);
        self::assertSame([
            'bigneg' => -5, 'bigu' => '18446744073709551615', 'long' => -2, 'short' => -32768, 'tiny' => -1, 'tinyu' => 255,
            'null' => null, 'double' => 2.5, 'float' => 1.1, 'date' => '2024-02-29', 'dt' => '2024-02-29 13:14:15.123',
            'time' => '-26:03:04', 'zero' => '0000-00-00 00:00:00', 'str' => 'abc', 'year' => '1999', 'bit' => 256,
        ], Wire::binaryRow($packet, $columns, $names));
    }

    public function testTimeAndFractions(): void
    {
        self::assertSame('838:59:59.500000', Wire::time(\pack('CVCCCV', 0, 34, 22, 59, 59, 500000), 6));
        self::assertSame('00:00:00', Wire::time('', 0));
        self::assertSame('00:00:00.00', Wire::time('', 2));
        self::assertSame('2024-01-02 03:04:05.000007', Wire::dateTime(Protocol::TYPE_DATETIME, \pack('vCCCCCV', 2024, 1, 2, 3, 4, 5, 7), 31));
        self::assertSame('2024-01-02 00:00:00', Wire::dateTime(Protocol::TYPE_TIMESTAMP, \pack('vCC', 2024, 1, 2), 0));
        self::assertSame(1234.57, Wire::float(1234.5678, 2));
        self::assertSame(0.1, Wire::float(\unpack('g', \pack('g', 0.1))[1], 31));
    }

    public function testExecutePacketEncodesTypesAndTheNullBitmap(): void
    {
        $params = [1, null, 'ab', 1.5, true, new \DateTimeImmutable('2024-02-29 13:14:15.000250'), null, null, 'x', new \DateTime('2000-01-01 00:00:00')];
        $packet = Wire::execute(7, $params);
        $expected = "\x17" . \pack('V', 7) . "\x00" . \pack('V', 1)
            . "\xC2\x00" // params 1, 6, 7 are NULL (bits 1, 6, 7) in a 2-byte bitmap
            . "\x01"     // new params bound: types follow
            . "\x08\x00\x06\x00\xFD\x00\x05\x00\x01\x00\x0C\x00\x06\x00\x06\x00\xFD\x00\x0C\x00"
            . \pack('P', 1) . "\x02ab" . \pack('e', 1.5) . "\x01"
            . "\x0B" . \pack('vCCCCCV', 2024, 2, 29, 13, 14, 15, 250)
            . "\x01x"
            . "\x07" . \pack('vCCCCC', 2000, 1, 1, 0, 0, 0);
        self::assertSame(\bin2hex($expected), \bin2hex($packet));
        self::assertSame("\x17" . \pack('V', 9) . "\x00" . \pack('V', 1), Wire::execute(9, []));

        $long = \str_repeat('L', 70000);
        self::assertStringEndsWith("\xFD\x00" . "\xFD" . \substr(\pack('V', 70000), 0, 3) . $long, Wire::execute(1, [$long]));
        $this->expectException(\InvalidArgumentException::class);
        Wire::execute(1, [[1, 2]]);
    }

    public static function columnPacket(string $name, int $type, int $flags = 0, int $decimals = 0, string $table = 't', ?string $orgName = null): string
    {
        $pos = 0;
        $lenenc = static fn (string $s): string => Wire::encodeLenenc(\strlen($s)) . $s;
        return $lenenc('def') . $lenenc('weft') . $lenenc($table) . $lenenc($table) . $lenenc($name) . $lenenc($orgName ?? $name)
            . "\x0C" . \pack('vVCvC', 63, 11, $type, $flags, $decimals) . "\x00\x00";
    }
}
