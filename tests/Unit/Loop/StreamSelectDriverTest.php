<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Loop;

use Weft\Loop\Driver;
use Weft\Loop\StreamSelectDriver;
use Weft\Loop\UnsupportedStream;

final class StreamSelectDriverTest extends DriverContract
{
    protected function createDriver(): Driver
    {
        return new StreamSelectDriver();
    }

    public function testDescriptorsAbove1024AreRefusedCleanlyAndOthersKeepWorking(): void
    {
        $limit = \function_exists('posix_getrlimit') ? (int) (\posix_getrlimit()['soft openfiles'] ?? 0) : 0;
        if ($limit !== 0 && $limit < 1100) {
            self::markTestSkipped("open files limit is $limit");
        }
        [$a, $b] = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        $hold = [];
        while (true) {
            $pair = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
            $hold[] = $pair;
            if (!$this->loop->canWatch($pair[1])) {
                break;
            }
            self::assertLessThan(700, \count($hold), 'never reached descriptor 1024');
        }
        $high = $pair[1];
        try {
            $this->loop->onReadable($high, static function (): void {
            });
            self::fail('a descriptor above FD_SETSIZE was accepted');
        } catch (UnsupportedStream $e) {
            self::assertStringContainsString('1024', $e->getMessage());
        }
        // The low stream is untouched by the refusal.
        \fwrite($a, 'still fine');
        $got = null;
        $this->loop->onReadable($b, function (string $id, $stream) use (&$got): void {
            $got = \fread($stream, 100);
            $this->loop->cancel($id);
        });
        $this->loop->run();
        self::assertSame('still fine', $got);
        self::assertSame(0, $this->loop->watcherCount()['total']);
    }
}
