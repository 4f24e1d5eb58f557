<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Static;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Http\Static\ByteRange;

final class ByteRangeTest extends TestCase
{
    /** @return iterable<string, array{string, int, array{int, int}|false|null}> */
    public static function cases(): iterable
    {
        yield 'first bytes' => ['bytes=0-99', 1000, [0, 100]];
        yield 'one byte' => ['bytes=5-5', 10, [5, 1]];
        yield 'open end' => ['bytes=990-', 1000, [990, 10]];
        yield 'end clamped to the size' => ['bytes=900-5000', 1000, [900, 100]];
        yield 'suffix' => ['bytes=-500', 1000, [500, 500]];
        yield 'suffix larger than the file' => ['bytes=-5000', 1000, [0, 1000]];
        yield 'spaces and case' => [' Bytes = 1-2 ', 10, [1, 2]];
        yield 'empty list elements' => ['bytes=,1-2,', 10, [1, 2]];
        yield 'leading zeros' => ['bytes=0001-0002', 10, [1, 2]];
        yield 'huge end' => ['bytes=0-99999999999999999999999999', 10, [0, 10]];
        yield 'start at the size' => ['bytes=1000-', 1000, false];
        yield 'start beyond the size' => ['bytes=2000-3000', 1000, false];
        yield 'huge start' => ['bytes=99999999999999999999999999-', 1000, false];
        yield 'zero suffix' => ['bytes=-0', 1000, false];
        yield 'empty file' => ['bytes=0-', 0, false];
        yield 'suffix of an empty file' => ['bytes=-10', 0, false];
        yield 'several ranges' => ['bytes=0-1,4-5', 10, null];
        yield 'last before first' => ['bytes=5-1', 10, null];
        yield 'no numbers' => ['bytes=-', 10, null];
        yield 'other unit' => ['items=0-1', 10, null];
        yield 'garbage' => ['bytes=a-b', 10, null];
        yield 'negative' => ['bytes=-1-2', 10, null];
    }

    /** @return iterable<string, array{string, int, list<array{int, int}>|false|null}> */
    public static function sets(): iterable
    {
        yield 'one range' => ['bytes=0-99', 1000, [[0, 100]]];
        yield 'several, in the order asked' => ['bytes=500-599, 0-9,-10', 1000, [[500, 100], [0, 10], [990, 10]]];
        yield 'unsatisfiable ones dropped' => ['bytes=0-9,5000-', 1000, [[0, 10]]];
        yield 'none satisfiable' => ['bytes=5000-,6000-7000,-0', 1000, false];
        yield 'overlaps asking for more than the file' => ['bytes=0-,1-', 1000, null];
        yield 'adjacent ranges within the file' => ['bytes=0-499,500-999', 1000, [[0, 500], [500, 500]]];
        yield 'one malformed element' => ['bytes=0-1,x', 1000, null];
        yield 'one inverted element' => ['bytes=0-1,9-5', 1000, null];
        yield 'too many' => ['bytes=' . \implode(',', \array_map(static fn (int $i): string => "$i-$i", \range(0, ByteRange::MAX_RANGES))), 1000, null];
        yield 'as many as allowed' => ['bytes=' . \implode(',', \array_map(static fn (int $i): string => "$i-$i", \range(1, ByteRange::MAX_RANGES))), 1000, \array_map(static fn (int $i): array => [$i, 1], \range(1, ByteRange::MAX_RANGES))];
    }

    /** @param list<array{int, int}>|false|null $expected */
    #[DataProvider('sets')]
    public function testParseSet(string $header, int $size, array|false|null $expected): void
    {
        self::assertSame($expected, ByteRange::parseSet($header, $size));
    }

    /** @param array{int, int}|false|null $expected */
    #[DataProvider('cases')]
    public function testParse(string $header, int $size, array|false|null $expected): void
    {
        self::assertSame($expected, ByteRange::parse($header, $size));
    }
}
