<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Mode\Fpm;

use PHPUnit\Framework\TestCase;
use Weft\Mode\Fpm\RuntimeDirectory;

/** The fpm-mode runtime folder holds the configuration nginx and php-fpm read: it must be made by us. */
final class RuntimeDirectoryTest extends TestCase
{
    private string $base;

    protected function setUp(): void
    {
        $this->base = \sys_get_temp_dir() . '/weft-rtdir-' . \bin2hex(\random_bytes(4));
        \mkdir($this->base, 0700);
    }

    protected function tearDown(): void
    {
        \exec('rm -rf ' . \escapeshellarg($this->base));
    }

    public function testTheFolderIsPrivateAndALeftoverOfOursIsReplaced(): void
    {
        $path = "$this->base/weft.pid.fpm";
        RuntimeDirectory::create($path);
        self::assertSame(0700, \fileperms($path) & 0777);
        self::assertSame(0700, \fileperms("$path/nginx/proxy") & 0777);
        \file_put_contents("$path/stale.conf", 'x');
        RuntimeDirectory::create($path);   // a killed server's folder: Weft's marker is in it
        self::assertFileDoesNotExist("$path/stale.conf");
        RuntimeDirectory::remove($path);
        self::assertDirectoryDoesNotExist($path);
    }

    public function testAPlantedSymlinkOrForeignFolderIsRefusedAndNothingIsWrittenThrough(): void
    {
        \mkdir("$this->base/target", 0700);
        \touch("$this->base/target/.weft-fpm");   // even one that claims to be Weft's
        \symlink("$this->base/target", "$this->base/link.fpm");
        try {
            RuntimeDirectory::create("$this->base/link.fpm");
            self::fail('a symlink was accepted as the runtime folder');
        } catch (\RuntimeException $e) {
            self::assertStringContainsString('link.fpm', $e->getMessage());
        }
        self::assertSame(['.', '..', '.weft-fpm'], \scandir("$this->base/target"));

        \mkdir("$this->base/foreign.fpm", 0777);
        $this->expectException(\RuntimeException::class);
        RuntimeDirectory::create("$this->base/foreign.fpm");
    }
}
