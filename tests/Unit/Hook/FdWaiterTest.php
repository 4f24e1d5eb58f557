<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Hook;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Coroutine\Cancelled;
use Weft\Ext\Epoll;
use Weft\Ext\Hooks as Native;
use Weft\Hook\Hooks;
use Weft\Loop\NativeDriver;
use Weft\Loop\Loop;

use function Weft\go;
use function Weft\run;

/**
 * The C contract of ext/weft_hooks.h, exercised through Weft\Ext\Hooks::waitFd()/waitFds(), which call
 * weft_hook_wait_fd()/weft_hook_wait_fds() exactly as a hook does: inside a coroutine the wait suspends
 * only that coroutine (on both loop backends), outside one it blocks as poll(2) would.
 */
final class FdWaiterTest extends TestCase
{
    /** @var list<resource> */
    private array $streams = [];

    protected function setUp(): void
    {
        if (!Hooks::isSupported()) {
            self::markTestSkipped('the weft extension is not loaded (bash scripts/build-ext.sh)');
        }
    }

    protected function tearDown(): void
    {
        Hooks::disable();
        foreach ($this->streams as $stream) {
            if (\is_resource($stream)) {
                \fclose($stream);
            }
        }
        $this->streams = [];
        Loop::reset('select');
    }

    /** @return iterable<string, array{string}> */
    public static function backends(): iterable
    {
        yield 'select' => ['select'];
        yield 'epoll' => ['epoll'];
    }

    #[DataProvider('backends')]
    public function testTwoCoroutinesWaitingOnRawDescriptorsOverlap(string $backend): void
    {
        $this->useLoop($backend);
        [$a, $aPeer] = $this->pair();
        [$b, $bPeer] = $this->pair();
        $log = [];
        run(function () use ($a, $b, $aPeer, $bPeer, &$log): void {
            $waitA = go(static function () use ($a, &$log): int {
                $ready = Native::waitFd(Epoll::descriptorOf($a), Native::READ, 10.0);
                $log[] = 'a woke';
                return $ready;
            });
            $waitB = go(static function () use ($b, &$log): int {
                $ready = Native::waitFd(Epoll::descriptorOf($b), Native::READ, 10.0);
                $log[] = 'b woke';
                return $ready;
            });
            // Both are suspended now: had the first wait blocked the process, we would not be here.
            $log[] = 'both waiting';
            \fwrite($bPeer, 'x');
            self::assertSame(Native::READ, $waitB->join());
            \fwrite($aPeer, 'y');
            self::assertSame(Native::READ, $waitA->join());
        });
        self::assertSame(['both waiting', 'b woke', 'a woke'], $log);
        self::assertSame(0, Loop::get()->watcherCount()['total'], 'every watcher of the waits is gone');
    }

    #[DataProvider('backends')]
    public function testAWaitTimesOutWithZero(string $backend): void
    {
        $this->useLoop($backend);
        [$a] = $this->pair();
        $other = null;
        $result = run(function () use ($a, &$other): int {
            // A coroutine that keeps running meanwhile shows that the timed wait suspends.
            $other = go(static function (): string {
                \Weft\sleep(0.01);
                return 'ran';
            });
            return Native::waitFd(Epoll::descriptorOf($a), Native::READ, 0.05);
        });
        self::assertSame(0, $result);
        self::assertSame('ran', $other->join());
    }

    #[DataProvider('backends')]
    public function testWritableAndSeveralDescriptors(string $backend): void
    {
        $this->useLoop($backend);
        [$a] = $this->pair();
        [$b, $bPeer] = $this->pair();
        $fa = Epoll::descriptorOf($a);
        $fb = Epoll::descriptorOf($b);
        $result = run(static function () use ($fa, $fb, $bPeer): array {
            $writable = Native::waitFd($fa, Native::WRITE, 5.0);
            $waiter = go(static fn (): array => Native::waitFds([$fa => Native::READ, $fb => Native::READ], 5.0));
            \fwrite($bPeer, 'x');
            return [$writable, $waiter->join(), Native::waitFds([], 0.01)];
        });
        self::assertSame([Native::WRITE, [$fb => Native::READ], []], $result);
    }

    #[DataProvider('backends')]
    public function testCancellingASuspendedWaitThrowsIntoItAndLeavesNoWatcher(string $backend): void
    {
        $this->useLoop($backend);
        [$a] = $this->pair();
        $fd = Epoll::descriptorOf($a);
        $outcome = run(static function () use ($fd): string {
            $waiter = go(static fn (): int => Native::waitFd($fd, Native::READ, 10.0));
            $waiter->cancel();
            try {
                $waiter->join();
                return 'not cancelled';
            } catch (Cancelled $e) {
                return 'cancelled';
            }
        });
        self::assertSame('cancelled', $outcome);
        self::assertSame(0, Loop::get()->watcherCount()['total']);
    }

    public function testOutsideACoroutineTheWaitBlocksLikePoll(): void
    {
        Hooks::enable();
        [$a, $peer] = $this->pair();
        $fd = Epoll::descriptorOf($a);
        self::assertFalse(Native::canSuspend(Native::STREAM));
        self::assertSame(0, Native::waitFd($fd, Native::READ, 0.01));
        \fwrite($peer, 'x');
        self::assertSame(Native::READ, Native::waitFd($fd, Native::READ, 5.0));
        self::assertSame([$fd => Native::READ], Native::waitFds([$fd => Native::READ], 5.0));
    }

    public function testInAFiberThatIsNotAWeftCoroutineTheWaitBlocks(): void
    {
        Hooks::enable();
        [$a, $peer] = $this->pair();
        $fd = Epoll::descriptorOf($a);
        \fwrite($peer, 'x');
        $fiber = new \Fiber(static fn (): int => Native::waitFd($fd, Native::READ, 5.0));
        $fiber->start();
        self::assertTrue($fiber->isTerminated(), 'the wait did not suspend the foreign Fiber');
        self::assertSame(Native::READ, $fiber->getReturn());
    }

    public function testWithoutTheWaiterNothingCanSuspend(): void
    {
        Hooks::disable();
        $fiber = new \Fiber(static fn (): bool => Native::canSuspend(Native::ALL));
        $fiber->start();
        self::assertFalse($fiber->getReturn());
        self::assertSame(0, Hooks::enabled());
    }

    public function testParseAndDescribe(): void
    {
        self::assertSame(Hooks::ALL, Hooks::parse('all'));
        self::assertSame(0, Hooks::parse('none'));
        self::assertSame(Native::STREAM | Native::SLEEP, Hooks::parse(' stream , sleep'));
        self::assertSame('stream, sleep', Hooks::describe(Native::STREAM | Native::SLEEP));
        self::assertSame('none', Hooks::describe(0));
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage('Unknown hook "sockets"');
        Hooks::parse('stream,sockets');
    }

    private function useLoop(string $backend): void
    {
        if ($backend === 'epoll' && !\Weft\Loop\DriverFactory::epollAvailable()) {
            self::markTestSkipped('no epoll backend');
        }
        Loop::reset($backend);
        // STREAM is what the stream hooks will check; the waiter itself serves every kind.
        Hooks::enable(Hooks::ALL);
    }

    /** @return array{resource, resource} */
    private function pair(): array
    {
        $pair = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        \array_push($this->streams, ...$pair);
        return $pair;
    }
}
