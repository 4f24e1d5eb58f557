<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Server\Watch;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Coroutine\IoWaiter;
use Weft\Ext\Inotify;
use Weft\Ext\InotifyException;
use Weft\Loop\Loop;

use function Weft\go;

/** Weft\Ext\Inotify (ext/weft_inotify.c), outside and inside a coroutine, on both loops, across fork(). */
final class InotifyTest extends TestCase
{
    private string $dir;

    protected function setUp(): void
    {
        if (!\class_exists(Inotify::class, false)) {
            self::markTestSkipped('needs the native extension (php -d extension=ext/modules/weft.so)');
        }
        $this->dir = \sys_get_temp_dir() . '/weft-inotify-' . \bin2hex(\random_bytes(4));
        \mkdir($this->dir, 0700);
    }

    protected function tearDown(): void
    {
        if (isset($this->dir)) {
            \exec('rm -rf ' . \escapeshellarg($this->dir));
        }
        Loop::reset('select');
    }

    public function testReportsEventsWithTheirNamesAndNothingWhenNothingHappened(): void
    {
        $inotify = new Inotify();
        self::assertIsInt($inotify->fd());
        $wd = $inotify->add($this->dir, Inotify::CREATE | Inotify::CLOSE_WRITE | Inotify::DELETE | Inotify::ONLYDIR);
        self::assertSame([], $inotify->read(), 'nothing yet: an empty list, never a blocking read');

        \file_put_contents($this->dir . '/a.php', 'x');
        \unlink($this->dir . '/a.php');
        \mkdir($this->dir . '/sub');
        $events = $inotify->read();
        self::assertSame([
            [$wd, Inotify::CREATE, 0, 'a.php'],
            [$wd, Inotify::CLOSE_WRITE, 0, 'a.php'],
            [$wd, Inotify::DELETE, 0, 'a.php'],
            [$wd, Inotify::CREATE | Inotify::ISDIR, 0, 'sub'],
        ], $events);

        self::assertTrue($inotify->remove($wd));
        self::assertFalse($inotify->remove($wd), 'a watch removed once is gone');
        self::assertSame([[$wd, Inotify::IGNORED, 0, '']], $inotify->read());
        $inotify->close();
        self::assertNull($inotify->fd());
        $inotify->close(); // twice is harmless
    }

    public function testEveryEventOfAManyReadBurstArrivesWithItsWholeName(): void
    {
        $inotify = new Inotify();
        $inotify->add($this->dir, Inotify::CREATE);
        // More than one read() buffer (64 KB) of events, names of the longest length a file may have.
        $names = [];
        for ($i = 0; $i < 600; $i++) {
            $name = \str_pad((string) $i, 255, 'x');
            \touch($this->dir . '/' . $name);
            $names[] = $name;
        }
        $seen = [];
        $reads = 0;
        while (($events = $inotify->read()) !== []) {
            $reads++;
            foreach ($events as [, $mask, , $name]) {
                self::assertSame(Inotify::CREATE, $mask);
                $seen[] = $name;
            }
        }
        self::assertSame($names, $seen);
        self::assertGreaterThan(1, $reads);
    }

    public function testBadArgumentsAndUnusableStatesThrowClearErrors(): void
    {
        $inotify = new Inotify();
        try {
            $inotify->add($this->dir . '/missing', Inotify::CREATE);
            self::fail('no exception');
        } catch (InotifyException $e) {
            self::assertSame(2, $e->getCode());
            self::assertStringContainsString('(ENOENT)', $e->getMessage());
            self::assertInstanceOf(\Weft\WeftException::class, $e);
        }
        try {
            $inotify->add(\tempnam($this->dir, 'f'), Inotify::CREATE | Inotify::ONLYDIR);
            self::fail('no exception');
        } catch (InotifyException $e) {
            self::assertStringContainsString('(ENOTDIR)', $e->getMessage());
        }
        foreach ([['', Inotify::CREATE], [$this->dir, 0], [$this->dir, Inotify::ISDIR], [$this->dir, -1], [$this->dir, Inotify::CREATE | (1 << 40)]] as [$path, $mask]) {
            try {
                $inotify->add($path, $mask);
                self::fail("no exception for '$path', $mask");
            } catch (\ValueError) {
            }
        }
        try {
            $inotify->add("$this->dir\0x", Inotify::CREATE);
            self::fail('no exception for a NUL byte');
        } catch (\ValueError|\TypeError) {
        }
        try {
            $inotify->remove(-1);
            self::fail('no exception');
        } catch (\ValueError) {
        }
        $inotify->close();
        $this->expectException(InotifyException::class);
        $this->expectExceptionMessage('closed');
        $inotify->read();
    }

    /** @return array<string, array{string}> */
    public static function loops(): array
    {
        return ['select' => ['select'], 'epoll' => ['epoll']];
    }

    #[DataProvider('loops')]
    public function testAWaitingCoroutineWakesWhenAFileChanges(string $loop): void
    {
        Loop::reset($loop);
        $inotify = new Inotify();
        $inotify->add($this->dir, Inotify::CLOSE_WRITE);
        $stream = \fopen('php://fd/' . $inotify->fd(), 'r');
        self::assertIsResource($stream);
        $got = null;
        $reader = go(static function () use ($stream, $inotify, &$got): void {
            (new IoWaiter($stream))->readable(5.0);
            $got = $inotify->read();
        });
        go(function (): void {
            \Weft\sleep(0.05);
            \file_put_contents($this->dir . '/later.php', '<?php');
        });
        $reader->join();
        \fclose($stream);
        self::assertSame('later.php', $got[0][3] ?? null);
        self::assertSame(Inotify::CLOSE_WRITE, $got[0][1]);
    }

    public function testAForkedChildCannotTakeTheParentsEventsAndClosingItsCopyKeepsTheParentsWatches(): void
    {
        $inotify = new Inotify();
        $inotify->add($this->dir, Inotify::CREATE);
        $result = (string) \tempnam(\sys_get_temp_dir(), 'weft-inotify-child');
        $pid = \pcntl_fork();
        if ($pid === 0) {
            $code = 0;
            try {
                $inotify->read();
                $code = 1;
            } catch (InotifyException $e) {
                $code = \str_contains($e->getMessage(), 'before fork()') ? 0 : 2;
            }
            $inotify->close();
            \file_put_contents($result, (string) $code);
            \posix_kill(\getmypid(), \SIGKILL); // no PHPUnit shutdown in the child
        }
        \pcntl_waitpid($pid, $status);
        $code = \file_get_contents($result);
        \unlink($result);
        self::assertSame('0', $code, 'the child was refused read() with the fork message');
        \touch($this->dir . '/after-fork');
        self::assertSame('after-fork', $inotify->read()[0][3] ?? null);
    }
}
