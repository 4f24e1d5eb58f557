<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Loop;

use Weft\Ext\Epoll;
use Weft\Ext\EpollException;
use Weft\Loop\Driver;
use Weft\Loop\NativeDriver;
use Weft\Loop\UnsupportedStream;

/**
 * The contract suite plus what is particular to epoll. Needs the weft extension: scripts/test.sh loads
 * ext/modules/weft.so when it is built (bash scripts/build-ext.sh); without it these tests skip.
 */
final class NativeDriverTest extends DriverContract
{
    protected function createDriver(): Driver
    {
        if (!\Weft\Loop\DriverFactory::epollAvailable()) {
            self::markTestSkipped('the weft extension is not loaded (bash scripts/build-ext.sh, then php -d extension=ext/modules/weft.so)');
        }
        return new NativeDriver();
    }

    public function testNameAndWhatItCanWatch(): void
    {
        self::assertSame('epoll', $this->loop->name());
        [$a] = self::pair();
        self::assertTrue($this->loop->canWatch($a));
        self::assertTrue($this->loop->canWatch(\STDERR));
        self::assertFalse($this->loop->canWatch(\fopen('php://memory', 'r+')));
        $closed = \fopen('php://memory', 'r');
        \fclose($closed);
        self::assertFalse($this->loop->canWatch($closed));
    }

    public function testThousandsOfStreamsWithDescriptorsBeyond1024(): void
    {
        $pairs = 3000;
        self::raiseOpenFilesLimit(2 * $pairs + 200);
        $hold = [];
        $fired = 0;
        $highest = 0;
        for ($i = 0; $i < $pairs; $i++) {
            [$a, $b] = self::pair();
            $hold[] = [$a, $b];
            $highest = \max($highest, (int) Epoll::descriptorOf($b));
            $this->loop->onReadable($b, function (string $id, $stream) use (&$fired, $i): void {
                self::assertSame("$i", \fread($stream, 100));
                $fired++;
                $this->loop->cancel($id);
            });
        }
        self::assertGreaterThan(1024, $highest);
        foreach ($hold as $i => [$a]) {
            \fwrite($a, "$i");
        }
        $this->loop->run();
        self::assertSame($pairs, $fired);
        self::assertSame(0, $this->loop->watcherCount()['total']);
    }

    public function testOnlyTheReadyStreamFiresAmongManyIdleOnes(): void
    {
        self::raiseOpenFilesLimit(2500);
        $idle = [];
        for ($i = 0; $i < 1100; $i++) {
            $idle[] = $pair = self::pair();
            $this->loop->onReadable($pair[1], static function (): void {
                self::fail('an idle stream fired');
            });
        }
        [$a, $b] = self::pair();
        self::assertGreaterThan(1024, Epoll::descriptorOf($b));
        $got = null;
        $this->loop->onReadable($b, function (string $id, $stream) use (&$got): void {
            $got = \fread($stream, 100);
            $this->loop->stop();
        });
        \fwrite($a, 'high');
        $this->loop->run();
        self::assertSame('high', $got);
        self::assertCount(1100, $idle);
    }

    public function testStreamClosedWhileWatchedWakesItsWatchersOnceThenThemGone(): void
    {
        [$a, $b] = self::pair(); // both ends kept: a closed peer would make $b report a hang-up
        $log = [];
        $this->loop->onReadable($b, static function (string $id, $stream) use (&$log): void {
            $log[] = 'read:' . \get_debug_type($stream);
        });
        $this->loop->onWritable($b, static function (string $id, $stream) use (&$log): void {
            $log[] = 'write';
        });
        // Deferred callbacks run before the first wait: the stream is closed while registered.
        $this->loop->defer(static function () use ($b): void {
            \fclose($b);
        });
        $this->loop->run();
        self::assertSame(['read:resource (closed)', 'write'], $log);
        self::assertSame(0, $this->loop->watcherCount()['total']);
    }

    public function testStreamClosedLongAfterItWasLastTouchedIsStillNoticed(): void
    {
        // The extension looks at untouched streams only every ~10 ms (not on every wait): the loop must
        // still wake for it rather than block on the remaining idle stream.
        [$a, $b] = self::pair();
        [$c, $d] = self::pair();
        $this->loop->unreference($this->loop->onReadable($d, static function (): void {
        }));
        $woke = null;
        $this->loop->onReadable($b, function (string $id, $stream) use (&$woke): void {
            $woke = \is_resource($stream) ? 'open' : 'closed';
        });
        // Frequent waits first (each one recent enough to skip the slow path), then the close, then quiet.
        $ticks = 0;
        $this->loop->repeat(0.001, function (string $id) use (&$ticks, $b): void {
            if (++$ticks === 20) {
                \fclose($b);
                $this->loop->cancel($id);
            }
        });
        $this->loop->unreference($this->loop->delay(3.0, function (): void {
            $this->loop->stop();
        }));
        $start = \hrtime(true);
        $this->loop->run();
        self::assertSame('closed', $woke);
        self::assertLessThan(2.0, (\hrtime(true) - $start) / 1e9);
        self::assertSame(['enabled' => 2, 'referenced' => 0, 'total' => 2], $this->loop->watcherCount());
    }

    public function testAReusedDescriptorNeverReceivesTheClosedStreamsEvents(): void
    {
        [$a1, $b1] = self::pair();
        $old = [];
        $this->loop->onReadable($b1, static function (string $id, $stream) use (&$old): void {
            $old[] = \is_resource($stream) ? 'open' : 'closed';
        });
        $fd = Epoll::descriptorOf($b1);
        // Closed without cancelling its watcher; the next pair most likely reuses its descriptor numbers.
        \fclose($a1);
        \fclose($b1);
        [$a2, $b2] = self::pair();
        $new = [];
        $this->loop->onReadable($b2, function (string $id, $stream) use (&$new, $b2): void {
            self::assertSame($b2, $stream);
            $new[] = \fread($stream, 100);
            $this->loop->cancel($id);
        });
        \fwrite($a2, 'fresh');
        $this->loop->run();
        self::assertSame(['closed'], $old);
        self::assertSame(['fresh'], $new);
        self::assertContains($fd, [Epoll::descriptorOf($a2), Epoll::descriptorOf($b2)], 'descriptor was not reused; the test proves less');
        self::assertSame(0, $this->loop->watcherCount()['total']);
    }

    public function testCancelThenCloseLeavesNothingBehindWhenAnotherProcessSharesTheDescriptor(): void
    {
        [$a, $b] = self::pair();
        $id = $this->loop->onReadable($b, static function (): void {
        });
        // The child inherits $b: closing it here then does not release its open file, and a registration
        // still in the kernel's set could no longer be removed (it would report "readable" forever).
        $child = \proc_open(['sleep', '5'], [], $pipes);
        try {
            $this->loop->cancel($id);
            \fclose($b);
            \fwrite($a, 'data the child never reads');
            // Another stream keeps the loop in epoll_wait() (with none, it would simply sleep).
            $other = self::pair();
            $this->loop->unreference($this->loop->onReadable($other[1], static function (): void {
            }));
            $this->loop->delay(0.3, static function (): void {
            });
            $before = \getrusage();
            $this->loop->run();
            $after = \getrusage();
            $cpu = ($after['ru_utime.tv_sec'] - $before['ru_utime.tv_sec']) + ($after['ru_utime.tv_usec'] - $before['ru_utime.tv_usec']) / 1e6
                + ($after['ru_stime.tv_sec'] - $before['ru_stime.tv_sec']) + ($after['ru_stime.tv_usec'] - $before['ru_stime.tv_usec']) / 1e6;
            self::assertLessThan(0.15, $cpu, 'the loop spun on a stale registration');
        } finally {
            \proc_terminate($child, \SIGKILL);
            \proc_close($child);
        }
    }

    public function testReadAndWriteWatchersOnTheSameStream(): void
    {
        [$a, $b] = self::pair();
        $log = [];
        $this->loop->onWritable($b, function (string $id, $stream) use (&$log, $a): void {
            $log[] = 'writable';
            \fwrite($stream, 'to a');
            \fwrite($a, 'to b');
            $this->loop->cancel($id);
        });
        $this->loop->onReadable($b, function (string $id, $stream) use (&$log): void {
            $log[] = 'read ' . \fread($stream, 100);
            $this->loop->cancel($id);
        });
        $this->loop->run();
        self::assertSame(['writable', 'read to b'], $log);
        self::assertSame('to a', \fread($a, 100));
    }

    public function testReEnableAfterDisable(): void
    {
        [$a, $b] = self::pair();
        $reads = [];
        $id = $this->loop->onReadable($b, function (string $id, $stream) use (&$reads): void {
            $reads[] = \fread($stream, 100);
            $this->loop->disable($id);
        });
        \fwrite($a, 'one');
        $this->loop->run();
        self::assertSame(['one'], $reads);

        // Disabled: data arrives but the watcher stays quiet and does not keep run() going.
        \fwrite($a, 'two');
        $this->loop->delay(0.02, static function (): void {
        });
        $this->loop->run();
        self::assertSame(['one'], $reads);

        $this->loop->enable($id);
        $this->loop->run();
        self::assertSame(['one', 'two'], $reads);

        // Disable and enable again within one tick (what a coroutine reading in a loop does).
        \fwrite($a, 'three');
        $this->loop->enable($id);
        $this->loop->disable($id);
        $this->loop->enable($id);
        $this->loop->run();
        self::assertSame(['one', 'two', 'three'], $reads);
        $this->loop->cancel($id);
        self::assertSame(0, $this->loop->watcherCount()['total']);
    }

    public function testDisabledThenClosedThenEnabledWakesOnceAndIsCancelled(): void
    {
        [$a, $b] = self::pair(); // both ends kept: a closed peer would make $b report a hang-up
        $calls = 0;
        $id = $this->loop->onReadable($b, static function () use (&$calls): void {
            $calls++;
        });
        $this->loop->disable($id);
        $this->loop->delay(0.001, static function (): void {
        });
        $this->loop->run();
        \fclose($b);
        $this->loop->enable($id);
        $this->loop->run();
        self::assertSame(1, $calls);
        self::assertSame(0, $this->loop->watcherCount()['total']);
    }

    public function testPeerHangupWakesReadAndWriteWatchers(): void
    {
        [$a, $b] = self::pair();
        $log = [];
        $this->loop->onReadable($b, function (string $id, $stream) use (&$log): void {
            $log[] = 'read ' . \var_export(\fread($stream, 100), true);
            $this->loop->cancel($id);
        });
        \fclose($a);
        $this->loop->run();
        self::assertSame(["read ''"], $log);

        [$c, $d] = self::pair();
        // Fill d's send buffer so it is not writable, then let the peer go: the write watcher must wake.
        \stream_set_blocking($d, false);
        while (@\fwrite($d, \str_repeat('x', 65536)) > 0) {
        }
        $woke = false;
        $this->loop->onWritable($d, function (string $id) use (&$woke): void {
            $woke = true;
            $this->loop->cancel($id);
        });
        $this->loop->delay(0.01, static function () use ($c): void {
            \fclose($c);
        });
        $this->loop->run();
        self::assertTrue($woke);
    }

    public function testDataInPhpsReadBufferCountsAsReadable(): void
    {
        [$a, $b] = self::pair();
        \fwrite($a, "first\nsecond\n");
        $lines = [];
        $this->loop->onReadable($b, function (string $id, $stream) use (&$lines): void {
            // fgets() reads both lines from the socket into PHP's buffer and returns one: the kernel then
            // sees nothing left to read, yet the watcher must fire again for the second line.
            $lines[] = \fgets($stream);
            if (\count($lines) === 2) {
                $this->loop->cancel($id);
            }
        });
        $this->loop->delay(1.0, function (): void {
            $this->loop->stop();
        });
        $this->loop->run();
        self::assertSame(["first\n", "second\n"], $lines);
    }

    public function testRegularFilesAreAlwaysReadyLikeSelectSays(): void
    {
        $file = \tmpfile();
        \fwrite($file, 'content');
        \rewind($file);
        $got = null;
        $this->loop->onReadable($file, function (string $id, $stream) use (&$got): void {
            $got = \fread($stream, 100);
            $this->loop->cancel($id);
        });
        $this->loop->run();
        self::assertSame('content', $got);
        self::assertSame(0, $this->loop->watcherCount()['total']);
    }

    public function testStreamsWithoutADescriptorAreRefusedCleanly(): void
    {
        try {
            $this->loop->onReadable(\fopen('php://memory', 'r+'), static function (): void {
            });
            self::fail('a memory stream was accepted');
        } catch (UnsupportedStream $e) {
            self::assertStringContainsString('no file descriptor', $e->getMessage());
        }
        self::assertSame(['enabled' => 0, 'referenced' => 0, 'total' => 0], $this->loop->watcherCount());
    }

    public function testASignalEndsABlockingWait(): void
    {
        if (!\function_exists('posix_kill')) {
            self::markTestSkipped('posix extension missing');
        }
        [$a, $b] = self::pair(); // both ends kept: a closed peer would make $b report a hang-up
        $idle = $this->loop->onReadable($b, static function (): void {
        });
        $got = null;
        $this->loop->onSignal(\SIGUSR1, function (string $id, int $signal) use (&$got, $idle): void {
            $got = $signal;
            $this->loop->cancel($id);
            $this->loop->cancel($idle);
        });
        $child = \proc_open(['sh', '-c', 'sleep 0.1; kill -USR1 ' . \getmypid()], [], $pipes);
        $start = \hrtime(true);
        $this->loop->run();
        \proc_close($child);
        self::assertSame(\SIGUSR1, $got);
        self::assertLessThan(5.0, (\hrtime(true) - $start) / 1e9);
    }

    public function testAForkedChildCannotDisturbTheParentsRegistrations(): void
    {
        if (!\function_exists('pcntl_fork') || !\function_exists('pcntl_exec')) {
            self::markTestSkipped('pcntl extension missing');
        }
        [$a, $b] = self::pair();
        $got = null;
        $id = $this->loop->onReadable($b, function (string $id, $stream) use (&$got): void {
            $got = \fread($stream, 100);
            $this->loop->cancel($id);
        });
        $pid = \pcntl_fork();
        if ($pid === 0) {
            // In the child: waiting on the inherited driver is refused, cancelling only forgets, and a
            // fresh driver works. Leave through exec so no PHPUnit shutdown code runs here.
            $code = 0;
            try {
                $this->loop->run();
                $code |= 1;
            } catch (EpollException $e) {
                $code |= \str_contains($e->getMessage(), 'fork') ? 0 : 2;
            } catch (\Throwable) {
                $code |= 4;
            }
            try {
                $this->loop->cancel($id);
                $fresh = new NativeDriver();
                [$c, $d] = self::pair();
                \fwrite($c, 'x');
                $ok = false;
                $fresh->onReadable($d, static function (string $wid) use (&$ok, $fresh): void {
                    $ok = true;
                    $fresh->cancel($wid);
                });
                $fresh->run();
                $code |= $ok ? 0 : 8;
            } catch (\Throwable) {
                $code |= 16;
            }
            \pcntl_exec('/bin/sh', ['-c', "exit $code"]);
            \posix_kill(\getmypid(), \SIGKILL);
        }
        self::assertGreaterThan(0, $pid);
        \pcntl_waitpid($pid, $status);
        self::assertTrue(\pcntl_wifexited($status));
        self::assertSame(0, \pcntl_wexitstatus($status));
        // The parent's registration survived the child's cancel.
        \fwrite($a, 'parent');
        $this->loop->delay(2.0, function (): void {
            $this->loop->stop();
        });
        $this->loop->run();
        self::assertSame('parent', $got);
    }

    public function testTheExtensionReportsErrorsWithTheirErrno(): void
    {
        $epoll = new Epoll();
        [$a, $b] = self::pair();
        $epoll->add($b, Epoll::IN, 7);
        self::assertCount(1, $epoll);
        self::assertSame([], $epoll->wait(0));
        foreach ([
            ['EEXIST', static fn () => $epoll->add($a, Epoll::IN, 7)],      // key taken
            ['EEXIST', static fn () => $epoll->add($b, Epoll::IN, 8)],      // descriptor taken
            ['ENOENT', static fn () => $epoll->modify(9, Epoll::IN)],
            ['ENOENT', static fn () => $epoll->remove(9)],
            ['EPERM', static fn () => $epoll->add(\tmpfile(), Epoll::IN, 10)],
        ] as [$name, $call]) {
            try {
                $call();
                self::fail("$name expected");
            } catch (EpollException $e) {
                self::assertStringContainsString("($name)", $e->getMessage());
                self::assertGreaterThan(0, $e->getCode());
            }
        }
        self::assertCount(1, $epoll);
        \fwrite($a, 'x');
        self::assertSame([7 => Epoll::IN], $epoll->wait(1.0));
        $epoll->modify(7, Epoll::IN | Epoll::OUT);
        self::assertSame([7 => Epoll::IN | Epoll::OUT], $epoll->wait(0));
        \fclose($b);
        self::assertSame([7 => Epoll::CLOSED | Epoll::HUP], $epoll->wait(0));
        self::assertCount(0, $epoll);
        self::assertSame([], $epoll->wait(0.001));
        self::assertMatchesRegularExpression('/^\d+\.\d+\.\d+$/', \Weft\Ext\version());
        self::assertSame(\Weft\Ext\VERSION, \Weft\Ext\version());
    }

    /** @return array{resource, resource} */
    private static function pair(): array
    {
        $pair = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        if ($pair === false) {
            self::fail('stream_socket_pair() failed (out of descriptors?)');
        }
        return $pair;
    }

    private static function raiseOpenFilesLimit(int $needed): void
    {
        if (!\function_exists('posix_getrlimit')) {
            self::markTestSkipped('posix extension missing');
        }
        $limits = \posix_getrlimit();
        $soft = $limits['soft openfiles'];
        $hard = $limits['hard openfiles'];
        if ($soft !== 'unlimited' && (int) $soft < $needed) {
            if ($hard !== 'unlimited' && (int) $hard < $needed) {
                self::markTestSkipped("open files limit is $soft (hard $hard); $needed needed");
            }
            if (!\posix_setrlimit(\POSIX_RLIMIT_NOFILE, $needed, $hard === 'unlimited' ? \POSIX_RLIMIT_INFINITY : (int) $hard)) {
                self::markTestSkipped("cannot raise the open files limit from $soft to $needed");
            }
        }
    }

    public function testCWatchersRunOnTheSameLoopInTheirPlaceAmongPhpOnes(): void
    {
        // ext/weft_loop.h's C API, through its test seam: a C read watcher on a raw descriptor, a C
        // deferred call, a C delay and a C repeat, between PHP watchers of the same kinds.
        [$a, $b] = self::pair();
        $fd = Epoll::descriptorOf($b);
        self::assertIsInt($fd);
        $log = [];
        $report = static function (string $what, int $n) use (&$log): void {
            $log[] = "C $what $n";
        };
        $this->loop->defer(static function () use (&$log): void {
            $log[] = 'PHP defer';
        });
        $ids = $this->loop->probeNativeApi($fd, $report);
        self::assertCount(4, $ids);
        self::assertSame(['enabled' => 5, 'referenced' => 3, 'total' => 5], $this->loop->watcherCount());
        $this->loop->delay(0.02, static function () use ($a, &$log): void {
            $log[] = 'PHP delay';
            \fwrite($a, 'x');
        });
        $this->loop->run();
        // Deferred calls run in order before the first wait; the rest in the order time and I/O allow
        // (not asserted between timers of 1 and 2 ms: a slow machine, or valgrind, may merge them).
        self::assertSame(['PHP defer', 'C defer 1'], \array_slice($log, 0, 2));
        self::assertEqualsCanonicalizing(['PHP defer', 'C defer 1', 'C repeat 1', 'C delay 1', 'C repeat 2', 'PHP delay', 'C fd 1'], $log);
        self::assertLessThan(\array_search('C repeat 2', $log, true), \array_search('C repeat 1', $log, true));
        self::assertSame(['PHP delay', 'C fd 1'], \array_slice($log, -2), 'the descriptor turns readable: WEFT_LOOP_READ; it cancels itself');
        self::assertSame(['enabled' => 0, 'referenced' => 0, 'total' => 0], $this->loop->watcherCount());
        unset($report);
        // Each C watcher's release function dropped its reference to $report: nothing holds it now.
        $weak = \WeakReference::create($probe = static function (): void {
        });
        $this->loop->probeNativeApi($fd, $probe);
        unset($probe);
        self::assertNotNull($weak->get(), 'held by the C watchers');
        $this->loop = $this->createDriver();
        self::assertNull($weak->get(), 'released with the loop');
    }

    public function testACWatcherOnADescriptorEpollRefusesFailsCleanly(): void
    {
        $this->expectException(UnsupportedStream::class);
        try {
            $this->loop->probeNativeApi(99999, static function (): void {
            });
        } finally {
            self::assertSame(0, $this->loop->watcherCount()['total']);
        }
    }

    public function testTheHooksIdlePollTakesTheNativeLoopOnly(): void
    {
        try {
            \Weft\Ext\Hooks::idleLoop(new Epoll());
            self::fail('an Epoll was accepted');
        } catch (\TypeError $e) {
            self::assertStringContainsString('Weft\Ext\Loop', $e->getMessage());
        }
    }
}
