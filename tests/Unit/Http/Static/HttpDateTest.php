<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Static;

use PHPUnit\Framework\TestCase;
use Weft\Http\Static\HttpDate;

final class HttpDateTest extends TestCase
{
    public function testTheThreeFormsOfRfc9110(): void
    {
        self::assertSame(784111777, HttpDate::parse('Sun, 06 Nov 1994 08:49:37 GMT'));
        self::assertSame(784111777, HttpDate::parse('Sunday, 06-Nov-94 08:49:37 GMT'));
        self::assertSame(784111777, HttpDate::parse('Sun Nov  6 08:49:37 1994'));
    }

    public function testAnythingElseIsNull(): void
    {
        foreach (['', 'tomorrow', 'now', '784111777', 'Sun, 31 Feb 1994 08:49:37 GMT', 'Sun, 06 Nov 1994 25:49:37 GMT', '2024-01-01T00:00:00Z', 'Sun, 06 Nov 1994 08:49:37 CET'] as $value) {
            self::assertNull(HttpDate::parse($value), $value);
        }
    }
}
