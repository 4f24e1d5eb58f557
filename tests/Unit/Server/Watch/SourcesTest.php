<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Server\Watch;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Loop\Loop;
use Weft\Server\Watch\ChangeSource;
use Weft\Server\Watch\InotifySource;
use Weft\Server\Watch\PollingSource;
use Weft\Server\Watch\WatchList;

/**
 * What the watch list counts and what each change source reports for the same edits: the polling one
 * (without the extension) and the inotify one must name the same files.
 */
final class SourcesTest extends TestCase
{
    private string $dir;

    protected function setUp(): void
    {
        $this->dir = \sys_get_temp_dir() . '/weft-watchlist-' . \bin2hex(\random_bytes(4));
        foreach (['src/Http', 'config', 'var/cache', 'storage', 'node_modules/x', '.git', 'vendor/acme/lib', 'bootstrap/cache', 'templates/mail'] as $sub) {
            \mkdir($this->dir . '/' . $sub, 0700, true);
        }
        foreach (['app.php', 'src/Http/Kernel.php', 'config/app.yaml', '.env', '.env.local', 'composer.lock', 'README.md', 'var/cache/c.php',
                  'storage/s.php', 'node_modules/x/i.php', '.git/HEAD', 'vendor/acme/lib/L.php', 'bootstrap/cache/p.php', 'bootstrap/app.php',
                  'templates/mail/hi.twig', 'templates/base.twig', 'templates/mail/hi.txt'] as $file) {
            \file_put_contents($this->dir . '/' . $file, "<?php\n");
        }
        Loop::reset('select');
    }

    protected function tearDown(): void
    {
        \exec('rm -rf ' . \escapeshellarg($this->dir));
        Loop::reset('select');
    }

    public function testTheDefaultListIsTheApplicationsCodeAndConfigurationOnly(): void
    {
        self::assertSame(['.env', '.env.local', 'app.php', 'bootstrap/app.php', 'composer.lock', 'config/app.yaml', 'src/Http/Kernel.php'], $this->listed(WatchList::build($this->dir . '/app.php')));
    }

    public function testWatchPathsAddFilesDirectoriesUnderVendorAndGlobs(): void
    {
        $list = WatchList::build($this->dir . '/app.php', ['vendor/acme', 'templates/**/*.twig', $this->dir . '/README.md'], $this->dir);
        self::assertSame([
            '.env', '.env.local', 'README.md', 'app.php', 'bootstrap/app.php', 'composer.lock', 'config/app.yaml', 'src/Http/Kernel.php',
            'templates/base.twig', 'templates/mail/hi.twig', 'vendor/acme/lib/L.php',
        ], $this->listed($list));
        self::assertTrue($list->anyCounts($this->dir . '/vendor/acme/lib/New.php'));
        self::assertFalse($list->anyCounts($this->dir . '/vendor/other/New.php'));
        self::assertFalse($list->anyCounts($this->dir . '/var/cache/New.php'));
        self::assertFalse($list->anyCounts($this->dir . '/templates/mail/hi.txt'));
    }

    public function testAWatchPathThatDoesNotExistIsRefusedButAGlobMayMatchNothingYet(): void
    {
        WatchList::build($this->dir . '/app.php', ['templates/**/*.blade.php'], $this->dir);
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage("--watch-path 'nope' not found");
        WatchList::build($this->dir . '/app.php', ['nope'], $this->dir);
    }

    /** @return array<string, array{string, string}> */
    public static function globs(): array
    {
        return [
            '** crosses directories' => ['**/*.twig', 'a/b/c.twig'],
            '** also matches none' => ['**/*.twig', 'c.twig'],
            '* stays in one name' => ['*.twig', 'c.twig'],
            'class' => ['[ab].php', 'a.php'],
            'negated class' => ['[!ab].php', 'c.php'],
            '?' => ['?.php', 'x.php'],
        ];
    }

    #[DataProvider('globs')]
    public function testGlobs(string $glob, string $path): void
    {
        self::assertMatchesRegularExpression(WatchList::globToRegex($glob), $path);
    }

    public function testGlobsDoNotOvermatch(): void
    {
        self::assertDoesNotMatchRegularExpression(WatchList::globToRegex('*.twig'), 'a/c.twig');
        self::assertDoesNotMatchRegularExpression(WatchList::globToRegex('?.php'), 'ab.php');
        self::assertDoesNotMatchRegularExpression(WatchList::globToRegex('[!ab].php'), 'a.php');
        self::assertDoesNotMatchRegularExpression(WatchList::globToRegex('a.php'), 'aXphp');
    }

    /** @return array<string, array{string}> */
    public static function sources(): array
    {
        return ['polling' => ['polling'], 'inotify' => ['inotify']];
    }

    #[DataProvider('sources')]
    public function testBothSourcesNameTheSameChanges(string $kind): void
    {
        $list = WatchList::build($this->dir . '/app.php');
        $source = $this->source($kind, $list);
        $seen = [];
        $source->start(Loop::get(), static function (array $paths) use (&$seen): void {
            \array_push($seen, ...$paths);
        });

        // Rewritten in the same second with the same size: only the content tells.
        \file_put_contents($this->dir . '/app.php', "<?PHP\n");
        \file_put_contents($this->dir . '/src/Http/Kernel.php', "<?php\r");
        \unlink($this->dir . '/.env.local');
        \mkdir($this->dir . '/src/New/Deeper', 0700, true);
        \file_put_contents($this->dir . '/src/New/Deeper/Thing.php', "<?php\n");
        \file_put_contents($this->dir . '/var/cache/c.php', 'changed');
        \file_put_contents($this->dir . '/README.md', 'changed');
        \mkdir($this->dir . '/storage/new');
        \file_put_contents($this->dir . '/storage/new/s.php', 'new');

        $expected = ['.env.local', 'app.php', 'src/Http/Kernel.php', 'src/New/Deeper/Thing.php'];
        $this->collect($source, $seen, $expected);
        self::assertSame($expected, $this->relative($seen));
        $source->stop();
    }

    public function testAPollingPassSpreadOverManySlicesStillNamesExactlyWhatChanged(): void
    {
        // Enough files that a pass takes several 5 ms slices of the loop.
        for ($d = 0; $d < 40; $d++) {
            \mkdir($this->dir . "/src/d$d");
            for ($f = 0; $f < 100; $f++) {
                \touch($this->dir . "/src/d$d/f$f.php", \time() - 60);
            }
        }
        $source = new PollingSource(WatchList::build($this->dir . '/app.php'), 0.05);
        $seen = [];
        $source->start(Loop::get(), static function (array $paths) use (&$seen): void {
            \array_push($seen, ...$paths);
        });
        \file_put_contents($this->dir . '/src/d39/f99.php', 'changed');
        \unlink($this->dir . '/src/d0/f0.php');
        $expected = ['src/d0/f0.php', 'src/d39/f99.php'];
        $this->collect($source, $seen, $expected);
        self::assertSame($expected, $this->relative($seen));
        self::assertSame(4006, $source->watched());
        $source->stop();
    }

    private function source(string $kind, WatchList $list): ChangeSource
    {
        if ($kind === 'polling') {
            return new PollingSource($list, 0.05);
        }
        if (!InotifySource::available()) {
            self::markTestSkipped('needs the native extension');
        }
        $source = new InotifySource($list);
        return $source;
    }

    /** Runs the loop until the expected paths were reported (or 5 s). @param list<string> $seen */
    private function collect(ChangeSource $source, array &$seen, array $expected): void
    {
        $driver = Loop::get();
        $deadline = \microtime(true) + 5;
        $check = $driver->repeat(0.02, function () use (&$seen, $expected, $driver, $deadline): void {
            if (\array_diff($expected, $this->relative($seen)) === [] || \microtime(true) > $deadline) {
                // One more round for anything wrongly reported late.
                $driver->delay(0.15, static fn () => $driver->stop());
            }
        });
        $driver->run();
        $driver->cancel($check);
    }

    /** @param list<string> $paths @return list<string> */
    private function relative(array $paths): array
    {
        $paths = \array_values(\array_unique(\array_map(fn (string $p): string => \substr($p, \strlen($this->dir) + 1), $paths)));
        \sort($paths);
        return $paths;
    }

    /** @return list<string> */
    private function listed(WatchList $list): array
    {
        $files = [];
        foreach ($list->files() as [, $path]) {
            $files[] = $path;
        }
        return $this->relative($files);
    }
}
