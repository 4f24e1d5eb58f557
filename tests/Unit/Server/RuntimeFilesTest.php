<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Server;

use PHPUnit\Framework\TestCase;
use Weft\Server\PidFile;
use Weft\Server\RuntimeFiles;
use Weft\Server\UnsafePath;

final class RuntimeFilesTest extends TestCase
{
    private string $dir;
    private string|false $xdg;

    protected function setUp(): void
    {
        $this->dir = \sys_get_temp_dir() . '/weft-rt-' . \bin2hex(\random_bytes(4));
        \mkdir($this->dir, 0700);
        $this->xdg = \getenv('XDG_RUNTIME_DIR');
    }

    protected function tearDown(): void
    {
        \putenv($this->xdg === false ? 'XDG_RUNTIME_DIR' : 'XDG_RUNTIME_DIR=' . $this->xdg);
        \exec('rm -rf ' . \escapeshellarg($this->dir));
    }

    public function testTheDefaultDirectoryIsPrivate(): void
    {
        \putenv('XDG_RUNTIME_DIR');
        $dir = RuntimeFiles::directory();
        $stat = \lstat($dir);
        self::assertSame(0040000, $stat['mode'] & 0170000);
        self::assertSame(\posix_geteuid(), $stat['uid']);
        self::assertSame(0, $stat['mode'] & 0077, 'nobody else may enter it');
        self::assertSame($dir . '/weft-8080.pid', RuntimeFiles::defaultPidFile(8080));
    }

    public function testXdgRuntimeDirIsUsedOnlyWhenItIsPrivate(): void
    {
        \putenv('XDG_RUNTIME_DIR=' . $this->dir);
        self::assertSame($this->dir, RuntimeFiles::directory());
        \chmod($this->dir, 0755);
        self::assertNotSame($this->dir, RuntimeFiles::directory());
    }

    public function testLogsAreCreated0640AndNeverThroughASymlink(): void
    {
        $log = $this->dir . '/weft.log';
        $stream = RuntimeFiles::openLog($log);
        \fwrite($stream, "one\n");
        \fclose($stream);
        self::assertSame(0640, \fileperms($log) & 0777);
        $again = RuntimeFiles::openLog($log);
        \fwrite($again, "two\n");
        \fclose($again);
        self::assertSame("one\ntwo\n", \file_get_contents($log), 'appended, not truncated');

        \file_put_contents($this->dir . '/target', 'x');
        \symlink($this->dir . '/target', $this->dir . '/link.log');
        $this->expectException(UnsafePath::class);
        $this->expectExceptionMessage('symbolic link');
        RuntimeFiles::openLog($this->dir . '/link.log');
    }

    public function testAPidFileIsClaimedExclusivelyAndAStaleOneReplaced(): void
    {
        $pidFile = new PidFile($this->dir . '/weft.pid');
        \file_put_contents($pidFile->path, "999999999\n");
        self::assertSame(999999999, $pidFile->read());
        self::assertStringContainsString('no process with pid 999999999', (string) $pidFile->whyNotMaster(999999999));
        self::assertStringContainsString('not a Weft master', (string) $pidFile->whyNotMaster(1));
        $pidFile->claim(\getmypid());
        self::assertSame(\getmypid(), $pidFile->read());
        self::assertSame(0600, \fileperms($pidFile->path) & 0777);
        $pidFile->release(\getmypid());
        self::assertFileDoesNotExist($pidFile->path);
        \file_put_contents($pidFile->path, "garbage\n");
        self::assertNull($pidFile->read());
    }
}
