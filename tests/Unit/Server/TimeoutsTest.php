<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Server;

use PHPUnit\Framework\TestCase;
use Weft\Server\Session;
use Weft\Server\Timeouts;

/** A message stream's timers (WebSocket) under their own names, on the core's two read timers. */
final class TimeoutsTest extends TestCase
{
    public function testAStreamsIdleTimeIsTheTimerEveryReadRestartsAndItsCloseWaitTheOneFromItsStart(): void
    {
        $timeouts = Timeouts::forStream(idle: 60.0, closing: 5.0, send: 30.0);
        // Connection arms $body in the BODY phase (restarted by every read) and $header in HEAD (from its start).
        self::assertSame(Session::BODY, Session::STREAM_OPEN);
        self::assertSame(Session::HEAD, Session::STREAM_CLOSING);
        self::assertSame(60.0, $timeouts->body);
        self::assertSame(60.0, $timeouts->idle);
        self::assertSame(5.0, $timeouts->header);
        self::assertSame(30.0, $timeouts->send);
        self::assertSame(0.0, $timeouts->drainIdle);
    }

    public function testAStreamsTimeoutsMustBePositive(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        Timeouts::forStream(idle: 60.0, closing: 0.0, send: 30.0);
    }
}
