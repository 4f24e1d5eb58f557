<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Loop;

use PHPUnit\Framework\TestCase;
use Weft\Loop\DriverFactory;
use Weft\Loop\NativeLoopMissing;

final class DriverFactoryTest extends TestCase
{
    /** The loop says what is missing in its own words; how to build the extension is the command line's to say. */
    public function testTheEpollLoopWithoutTheExtensionIsATypedErrorThatNamesTheWayOut(): void
    {
        if (DriverFactory::epollAvailable()) {
            self::markTestSkipped('the weft extension is loaded');
        }
        try {
            DriverFactory::create('epoll');
            self::fail('no NativeLoopMissing');
        } catch (NativeLoopMissing $e) {
            self::assertStringStartsWith(NativeLoopMissing::MESSAGE, $e->getMessage());
            self::assertStringContainsString('select loop', $e->getMessage());
        }
        self::assertSame('select', DriverFactory::resolve('auto'));
    }

    public function testAnUnknownBackendIsRefused(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        DriverFactory::create('kqueue');
    }
}
