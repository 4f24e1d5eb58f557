<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Bench;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Bench\Load\AbParser;
use Weft\Bench\Load\UnexpectedOutput;
use Weft\Bench\Load\WrkParser;

/** The parsers read output captured from the real tools (tests/Unit/Bench/Fixtures). */
final class LoadParserTest extends TestCase
{
    private static function fixture(string $name): string
    {
        return (string) \file_get_contents(__DIR__ . '/Fixtures/' . $name);
    }

    public function testPlainWrkRun(): void
    {
        $r = WrkParser::parse(self::fixture('wrk-hello.txt'));
        self::assertSame(171240, $r->requests);
        self::assertEqualsWithDelta(2.01, $r->seconds, 1e-9);
        self::assertEqualsWithDelta(85389.92, $r->perSecond, 1e-6);
        self::assertEqualsWithDelta(0.00094, $r->p50, 1e-12);
        self::assertEqualsWithDelta(0.00176, $r->p90, 1e-12);
        self::assertEqualsWithDelta(0.00299, $r->p99, 1e-12);
        self::assertEqualsWithDelta(0.01259, $r->max, 1e-12);
        self::assertSame(['connect' => 0, 'read' => 0, 'write' => 0, 'timeout' => 0, 'non2xx' => 0, 'no_answer' => 0], $r->errors);
        self::assertTrue($r->hasLatency());
        $m = $r->metrics();
        self::assertSame(0.94, $m['p50_ms']);
        self::assertSame(2.99, $m['p99_ms']);
        self::assertSame(12.59, $m['max_ms']);
    }

    public function testSocketErrorsAtHighConcurrency(): void
    {
        $r = WrkParser::parse(self::fixture('wrk-c2000.txt'));
        self::assertSame(15417, $r->requests);
        self::assertSame(64622, $r->errors['read']);
        self::assertSame(0, $r->errors['connect']);
        self::assertEqualsWithDelta(0.27996, $r->p99, 1e-12);
        self::assertEqualsWithDelta(0.29017, $r->max, 1e-12);
        self::assertSame(64622, $r->errorTotal());
    }

    public function testNon2xxResponsesAndMicroseconds(): void
    {
        $r = WrkParser::parse(self::fixture('wrk-non2xx.txt'));
        self::assertSame(38195, $r->errors['non2xx']);
        self::assertEqualsWithDelta(261e-6, $r->p50, 1e-12);
        self::assertEqualsWithDelta(3.71e-3, $r->p99, 1e-12);
    }

    public function testLatenciesInSeconds(): void
    {
        $r = WrkParser::parse(self::fixture('wrk-seconds.txt'));
        self::assertSame(20, $r->requests);
        self::assertEqualsWithDelta(1.10, $r->p99, 1e-9);
        self::assertEqualsWithDelta(6.66, $r->perSecond, 1e-9);
    }

    public function testARunWhereEveryRequestTimedOutHasNoLatency(): void
    {
        $r = WrkParser::parse(self::fixture('wrk-timeouts.txt'));
        self::assertSame(20, $r->errors['timeout']);
        self::assertFalse($r->hasLatency());
        self::assertNull($r->metrics()['p99_ms'], 'wrk prints 0.00us when nothing completed in time: that is no latency, not zero');
    }

    public function testAFailedRunIsAnError(): void
    {
        $this->expectException(UnexpectedOutput::class);
        $this->expectExceptionMessage('unable to connect');
        WrkParser::parse(self::fixture('wrk-refused.txt'));
    }

    /** @return iterable<array{string, float}> */
    public static function units(): iterable
    {
        yield 'microseconds' => ['us', 1e-6];
        yield 'milliseconds' => ['ms', 1e-3];
        yield 'seconds' => ['s', 1.0];
        yield 'minutes' => ['m', 60.0];
        yield 'hours' => ['h', 3600.0];
    }

    #[DataProvider('units')]
    public function testWrkTimeUnits(string $unit, float $factor): void
    {
        self::assertEqualsWithDelta(2.5 * $factor, WrkParser::seconds(2.5, $unit), 1e-12);
    }

    public function testApacheBenchKeepAlive(): void
    {
        $r = AbParser::parse(self::fixture('ab-k.txt'));
        self::assertSame('ab', $r->tool);
        self::assertSame(53954, $r->requests);
        self::assertEqualsWithDelta(53954.0, $r->perSecond, 1e-9);
        self::assertEqualsWithDelta(0.001, $r->p50, 1e-12);
        self::assertEqualsWithDelta(0.003, $r->p99, 1e-12);
        self::assertEqualsWithDelta(0.007, $r->max, 1e-12);
        self::assertSame(0, $r->errorTotal());
    }

    public function testApacheBenchFailures(): void
    {
        $output = \str_replace(
            "Failed requests:        0\n",
            "Failed requests:        12\n   (Connect: 2, Receive: 3, Length: 7, Exceptions: 0)\nNon-2xx responses:      5\n",
            self::fixture('ab-k.txt'),
        );
        $r = AbParser::parse($output);
        self::assertSame(2, $r->errors['connect']);
        self::assertSame(3, $r->errors['read']);
        self::assertSame(7, $r->errors['length']);
        self::assertSame(5, $r->errors['non2xx']);
    }
}
