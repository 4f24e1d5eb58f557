<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Server;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\ServerProcess;

/**
 * `serve --watch` against a real server on a temporary application directory: an edited handler is
 * served after the reload line, a burst of changes makes one reload, changes where applications write
 * (var/, storage/ ...) or to files that do not count make none, and it is refused where it must not run.
 * Each case runs with inotify (auto: the server loads the built extension) and with polling, the path
 * without the extension.
 */
final class WatchTest extends TestCase
{
    private string $dir;
    private string $source = '';

    protected function setUp(): void
    {
        $this->dir = \sys_get_temp_dir() . '/weft-watch-' . \bin2hex(\random_bytes(4));
        \mkdir($this->dir, 0700);
        foreach (['lib', 'var/cache', 'storage/logs', 'node_modules/pkg', '.git/objects', 'vendor/acme', 'bootstrap/cache'] as $sub) {
            \mkdir($this->dir . '/' . $sub, 0700, true);
        }
        $this->writeApp('one');
    }

    protected function tearDown(): void
    {
        \exec('rm -rf ' . \escapeshellarg($this->dir));
    }

    /** @return array<string, array{string}> */
    public static function backends(): array
    {
        return ['inotify (auto)' => ['auto'], 'polling' => ['polling']];
    }

    #[DataProvider('backends')]
    public function testAnEditedHandlerIsServedAfterTheReloadLine(string $with): void
    {
        $server = $this->start($with);
        self::assertSame('app one', RawHttp::get($server->address())['body']);

        // Same size, most likely within the same second as the first version: neither stat() nor
        // opcache's timestamp can tell them apart.
        $this->writeApp('two');
        $this->waitForReload($server, 1, 'reloading: 1 file changed: app.php');
        self::assertSame('app two', RawHttp::get($server->address())['body']);

        // And a class file the handler loads, right after.
        \file_put_contents($this->dir . '/lib/Greeting.php', "<?php\nfinal class Greeting { public const WORD = ', class three'; }\n");
        $this->waitForReload($server, 2, 'reloading: 1 file changed: lib/Greeting.php');
        self::assertSame('app two, class three', RawHttp::get($server->address())['body']);
        $server->stop();
    }

    #[DataProvider('backends')]
    public function testAHalfSavedFileLeavesTheOldWorkersServingUntilTheNextSave(string $with): void
    {
        $server = $this->start($with);
        if ($this->source === 'inotify') {
            // The master reads the events; a worker holds no copy of its inotify descriptor.
            self::assertContains('anon_inode:inotify', self::descriptors($server->masterPid()));
            foreach ($server->workerPids() as $pid) {
                self::assertNotContains('anon_inode:inotify', self::descriptors($pid));
            }
        }
        \file_put_contents($this->dir . '/app.php', "<?php\nreturn static fn ( => ;\n");
        ServerProcess::waitFor(static fn () => \str_contains($server->output(), 'Reload failed'), 15, 'the failed reload');
        self::assertSame('app one', RawHttp::get($server->address())['body']);

        $this->writeApp('two');
        $this->waitForReload($server, 2, 'reloading: 1 file changed: app.php');
        self::assertSame('app two', RawHttp::get($server->address())['body']);
        $server->stop();
    }

    #[DataProvider('backends')]
    public function testABurstOfTwentyChangesMakesOneReload(string $with): void
    {
        $server = $this->start($with);
        for ($i = 1; $i <= 20; $i++) {
            \file_put_contents($this->dir . "/lib/burst$i.php", "<?php // $i\n");
        }
        $this->waitForReload($server, 1, 'reloading: 20 files changed: lib/burst1.php, lib/burst10.php');
        // A later, single change: had the burst made two reloads, this one would be the third.
        \touch($this->dir . '/app.php', \time() + 5);
        $this->waitForReload($server, 2, 'reloading: 1 file changed: app.php');
        self::assertSame(2, \substr_count($server->output(), 'reloading: '), $server->output());
        $server->stop();
    }

    #[DataProvider('backends')]
    public function testChangesWhereApplicationsWriteOrToOtherFilesMakeNone(string $with): void
    {
        $server = $this->start($with);
        foreach (['var/cache/compiled.php', 'storage/logs/x.php', 'node_modules/pkg/index.php', '.git/objects/x.php',
                  'vendor/acme/Lib.php', 'bootstrap/cache/packages.php', 'notes.txt', 'lib/style.css'] as $file) {
            \file_put_contents($this->dir . '/' . $file, "<?php // ignored\n");
        }
        \mkdir($this->dir . '/var/cache/sub');
        \file_put_contents($this->dir . '/var/cache/sub/y.php', "<?php\n");
        // Then one that counts: it alone is named, in the first and only reload.
        \file_put_contents($this->dir . '/.env', "GREETING=hi\n");
        $this->waitForReload($server, 1, 'reloading: 1 file changed: .env');
        self::assertSame(1, \substr_count($server->output(), 'reloading: '), $server->output());

        // A directory created after the start is watched too, and vendor/ when a --watch-path names it
        // is not (this server was started without one).
        \mkdir($this->dir . '/lib/sub/deeper', 0700, true);
        \file_put_contents($this->dir . '/lib/sub/deeper/New.php', "<?php\n");
        $this->waitForReload($server, 2, 'reloading: 1 file changed: lib/sub/deeper/New.php');
        $server->stop();
    }

    #[DataProvider('backends')]
    public function testAWatchPathGlobAddsFilesOutsideTheDefaults(string $with): void
    {
        \mkdir($this->dir . '/templates/emails', 0700, true);
        $server = $this->start($with, ['--watch-path', $this->dir . '/templates/**/*.twig']);
        \file_put_contents($this->dir . '/templates/emails/other.txt', 'not matched');
        \file_put_contents($this->dir . '/templates/emails/welcome.twig', 'Hello {{ name }}');
        $this->waitForReload($server, 1, 'reloading: 1 file changed: templates/emails/welcome.twig');
        $server->stop();
    }

    public function testWatchIsRefusedWithDaemonOrInProductionUnlessForced(): void
    {
        [$code, $out] = ServerProcess::cli(['serve', $this->dir . '/app.php', '--watch', '--daemon', '--port', '0']);
        self::assertSame(2, $code, $out);
        self::assertStringContainsString('refused with --daemon', $out);

        [$code, $out] = ServerProcess::cli(['serve', $this->dir . '/app.php', '--watch-path', 'lib']);
        self::assertSame(2, $code, $out);
        self::assertStringContainsString("'--watch-path' needs --watch", $out);

        [$code, $out] = ServerProcess::cli(['serve', $this->dir . '/app.php', '--watch', '--watch-path', $this->dir . '/missing']);
        self::assertSame(2, $code, $out);
        self::assertStringContainsString('not found', $out);

        \putenv('APP_ENV=production');
        try {
            [$code, $out] = ServerProcess::cli(['serve', $this->dir . '/app.php', '--watch', '--port', '0']);
            self::assertSame(2, $code, $out);
            self::assertStringContainsString('refused with APP_ENV=production', $out);

            $server = new ServerProcess([$this->dir . '/app.php', '--workers', '1', '--watch', '--watch-force']);
            self::assertMatchesRegularExpression('/warning: Watching \d+ .* --watch is for development only/', $server->output());
            $server->stop();
        } finally {
            \putenv('APP_ENV');
        }
    }

    /** @param list<string> $extra */
    private function start(string $with, array $extra = []): ServerProcess
    {
        $server = new ServerProcess(\array_merge([$this->dir . '/app.php', '--workers', '2', '--watch', '--watch-with', $with], $extra));
        $output = $server->output();
        // The server restarts PHP with the extension built in this checkout (PhpRuntime), and with it
        // inotify; not under WEFT_NO_REEXEC, where auto falls back to polling.
        $native = \getenv('WEFT_NO_REEXEC') === false ? \is_file(\dirname(__DIR__, 3) . '/ext/modules/weft.so') : \extension_loaded('weft');
        $source = $with === 'polling' || !$native ? 'polling' : 'inotify';
        self::assertStringContainsString("for changes ($source)", $output);
        $this->source = $source;
        return $server;
    }

    /** Waits for the $nth reload line, which must read $line, and for its new workers to be the only ones. */
    private function waitForReload(ServerProcess $server, int $nth, string $line): void
    {
        ServerProcess::waitFor(static fn () => \substr_count($server->output(), 'reloading: ') >= $nth, 15, "reload $nth");
        \preg_match_all('/reloading: .*$/m', $server->output(), $m);
        self::assertStringStartsWith($line, $m[0][$nth - 1], $server->output());
        // The reload's outcome: ready (or failed, when the test saved code that cannot load).
        ServerProcess::waitFor(static fn () => \substr_count($server->output(), 'new worker(s) ready') + \substr_count($server->output(), 'Reload failed') >= $nth, 15, "reload $nth to finish");
        ServerProcess::waitFor(static function () use ($server) {
            $workers = $server->status()['workers'];
            return \count($workers) === 2 && \array_filter($workers, static fn ($w) => $w['state'] !== 'ready') === [];
        }, 15, 'only the new workers');
    }

    /** @return list<string> what the process's descriptors point to */
    private static function descriptors(int $pid): array
    {
        $targets = [];
        foreach (\glob("/proc/$pid/fd/*") ?: [] as $fd) {
            $targets[] = (string) @\readlink($fd);
        }
        return $targets;
    }

    private function writeApp(string $version): void
    {
        if (!\is_file($this->dir . '/lib/Greeting.php')) {
            \file_put_contents($this->dir . '/lib/Greeting.php', "<?php\nfinal class Greeting { public const WORD = ''; }\n");
        }
        \file_put_contents($this->dir . '/app.php', <<<PHP
            <?php
            use Weft\\Http\\Message\\{Request, Response};
            require_once __DIR__ . '/lib/Greeting.php';
            return static fn (Request \$r): Response => new Response(200, ['Content-Type' => 'text/plain'], 'app $version' . Greeting::WORD);
            PHP);
    }
}
