<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Client\Redis;

use PHPUnit\Framework\TestCase;
use Weft\Bench\Client\RedisBench;

/** The parser of `redis-benchmark -q` output used by Weft\Bench\Client\RedisBench. */
final class RedisBenchParseTest extends TestCase
{
    public function testParsesTheFinalLinesAndIgnoresProgress(): void
    {
        $output = "\rSET: rps=0.0 (overall: 32000.0) avg_msec=0.015 (overall: 0.015)\r"
            . "\rSET: 64935.07 requests per second, p50=0.015 msec\n"
            . "\rGET: rps=41605.6 (overall: 53829.9) avg_msec=0.014 (overall: 0.014)\r"
            . "\rGET: 56657.23 requests per second, p50=0.015 msec\n\n";
        self::assertSame(['set' => 64935.07, 'get' => 56657.23], RedisBench::parseRedisBenchmark($output));
    }

    public function testOlderFormatWithoutLatency(): void
    {
        self::assertSame(['set' => 123.5], RedisBench::parseRedisBenchmark("SET: 123.50 requests per second\n"));
        self::assertSame([], RedisBench::parseRedisBenchmark("Could not connect to Redis at 127.0.0.1:1: Connection refused\n"));
    }
}
