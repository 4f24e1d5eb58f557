<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http2;

use PHPUnit\Framework\TestCase;
use Weft\Http2\FloodGuard;
use Weft\Http2\Frame;
use Weft\Http2\Http2Error;
use Weft\Http2\Http2Protocol;

/** Each flood counts on its own, within Http2Protocol::FLOOD_WINDOW seconds of the clock given. */
final class FloodGuardTest extends TestCase
{
    private float $now = 100.0;

    public function testEachKindHasItsOwnLimitWithinTheWindow(): void
    {
        foreach (['reset' => 3, 'ping' => 4, 'settings' => 5, 'empty' => 6] as $kind => $limit) {
            $guard = new FloodGuard(3, 4, 5, 6, fn (): float => $this->now);
            for ($i = 0; $i < $limit; $i++) {
                $guard->{$kind}();
            }
            // The other kinds do not count against this one.
            foreach (['reset', 'ping', 'settings', 'empty'] as $other) {
                if ($other !== $kind) {
                    $guard->{$other}();
                }
            }
            try {
                $guard->{$kind}();
                self::fail("a $kind beyond $limit passed");
            } catch (Http2Error $e) {
                self::assertSame(Frame::ENHANCE_YOUR_CALM, $e->getCode(), $kind);
            }
        }
    }

    public function testANewWindowStartsAfresh(): void
    {
        $guard = new FloodGuard(2, 2, 2, 2, fn (): float => $this->now);
        $guard->reset();
        $guard->reset();
        $this->now += Http2Protocol::FLOOD_WINDOW;
        $guard->reset();
        $guard->reset();
        $this->expectException(Http2Error::class);
        $this->expectExceptionMessage('too many streams reset by the client');
        $guard->reset();
    }
}
