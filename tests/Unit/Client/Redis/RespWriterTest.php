<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Client\Redis;

use PHPUnit\Framework\TestCase;
use Weft\Client\Redis\Internal\Decode;
use Weft\Client\Redis\Protocol\RespWriter;

final class RespWriterTest extends TestCase
{
    public function testCommandsAreArraysOfBlobStrings(): void
    {
        self::assertSame("*3\r\n\$3\r\nSET\r\n\$1\r\nk\r\n\$5\r\na\r\nb\0\r\n", RespWriter::command(['SET', 'k', "a\r\nb\0"]));
        self::assertSame("*2\r\n\$4\r\nINCR\r\n\$2\r\n-7\r\n", RespWriter::command(['INCR', -7]));
        self::assertSame("*1\r\n\$4\r\nPING\r\n*1\r\n\$4\r\nPING\r\n", RespWriter::commands([['PING'], ['PING']]));
    }

    public function testFloatsUseTheShortestExactForm(): void
    {
        self::assertSame('0.1', RespWriter::float(0.1));
        self::assertSame('2', RespWriter::float(2.0));
        self::assertSame('-1.5', RespWriter::float(-1.5));
        self::assertSame('+inf', RespWriter::float(\INF));
        self::assertSame('-inf', RespWriter::float(-\INF));
        self::assertSame(1e-7, (float) RespWriter::float(1e-7));
        self::assertSame("*2\r\n\$1\r\nX\r\n\$3\r\n0.5\r\n", RespWriter::command(['X', 0.5]));
        $this->expectException(\InvalidArgumentException::class);
        RespWriter::float(\NAN);
    }

    public function testDecoders(): void
    {
        self::assertTrue(Decode::apply(Decode::OK, 'OK', 2));
        self::assertFalse(Decode::apply(Decode::OK, null, 2));
        self::assertTrue(Decode::apply(Decode::BOOL, 1, 2));
        self::assertFalse(Decode::apply(Decode::BOOL, 0, 3));
        self::assertSame(1.5, Decode::apply(Decode::FLOAT, '1.5', 2));
        self::assertSame(\INF, Decode::apply(Decode::FLOAT, 'inf', 2));
        self::assertNull(Decode::apply(Decode::FLOAT, null, 2));
        self::assertSame(['a' => '1', '0' => 'x'], Decode::apply(Decode::HASH, ['a', '1', '0', 'x'], 2));
        self::assertSame([0 => 'a', 1 => 'b'], Decode::apply(Decode::HASH, [0 => 'a', 1 => 'b'], 3), 'a RESP3 map stays as it is');
        self::assertSame(['m' => 1.0, 'n' => -\INF], Decode::apply(Decode::SCORES, ['m', '1', 'n', '-inf'], 2));
        self::assertSame(['m' => 1.0, 'n' => 2.5], Decode::apply(Decode::SCORES, [['m', 1.0], ['n', 2.5]], 3));
        self::assertSame([], Decode::apply(Decode::SCORES, [], 3));
    }
}
