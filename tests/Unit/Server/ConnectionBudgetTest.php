<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Server;

use PHPUnit\Framework\TestCase;
use Weft\Server\ConnectionBudget;

final class ConnectionBudgetTest extends TestCase
{
    public function testChargesFitUpToTheLimitAndReleasesGiveThemBack(): void
    {
        $budget = new ConnectionBudget(10_000);
        self::assertTrue($budget->fits(10_000));
        self::assertFalse($budget->fits(10_001));
        $budget->charge(6_000);
        self::assertTrue($budget->fits(4_000));
        self::assertFalse($budget->fits(4_001));
        $budget->charge(4_000);
        self::assertSame([10_000, 2], [$budget->charged, $budget->count]);
        $budget->release(6_000);
        self::assertSame([4_000, 1], [$budget->charged, $budget->count]);
        self::assertTrue($budget->fits(6_000));
    }

    public function testZeroIsNoBound(): void
    {
        self::assertTrue((new ConnectionBudget(0))->fits(\PHP_INT_MAX >> 1));
    }

    public function testTheDefaultIsHalfTheMemoryLimitLessWhatIsHeldAndAtLeastAnEighth(): void
    {
        $mb = 1 << 20;
        self::assertSame(64 * $mb - 2 * $mb, ConnectionBudget::forMemoryLimit(128 * $mb, 2 * $mb)->limit);
        self::assertSame(16 * $mb, ConnectionBudget::forMemoryLimit(128 * $mb, 60 * $mb)->limit, 'a large application still takes some');
        self::assertSame(16 * $mb, ConnectionBudget::forMemoryLimit(128 * $mb, 200 * $mb)->limit);
        self::assertSame(0, ConnectionBudget::forMemoryLimit(0, 2 * $mb)->limit, 'no memory limit, no bound');
    }

    public function testANegativeLimitIsRefused(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        new ConnectionBudget(-1);
    }

    public function testRefusalsAreCountedAndReportedAtMostEveryTenSeconds(): void
    {
        $budget = new ConnectionBudget(1);
        self::assertSame(1, $budget->refused());
        self::assertNull($budget->refused());
        self::assertNull($budget->refused());
    }
}
