<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http2\Hpack;

use PHPUnit\Framework\TestCase;
use Weft\Http2\Hpack\StaticTable;

final class StaticTableTest extends TestCase
{
    /** The two lookup maps are written out (opcache keeps constants shared); they must be ENTRIES, derived. */
    public function testTheLookupMapsAreDerivedFromTheEntries(): void
    {
        self::assertSame(\range(1, 61), \array_keys(StaticTable::ENTRIES));
        self::assertSame(61, StaticTable::COUNT);
        $byField = [];
        $byName = [];
        foreach (StaticTable::ENTRIES as $index => [$name, $value]) {
            $byField[$name . "\0" . $value] ??= $index;
            $byName[$name] ??= $index;
        }
        self::assertSame($byField, StaticTable::BY_FIELD);
        self::assertSame($byName, StaticTable::BY_NAME);
        self::assertSame([':status', '200'], StaticTable::ENTRIES[8]);
        self::assertSame(['www-authenticate', ''], StaticTable::ENTRIES[61]);
        self::assertSame(['accept-encoding', 'gzip, deflate'], StaticTable::ENTRIES[16]);
    }
}
