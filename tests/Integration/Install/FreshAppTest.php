<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Install;

use PHPUnit\Framework\TestCase;

/**
 * Weft installed the way docs/installing.md tells a user to, into a fresh Composer application in a temporary
 * directory: a path repository to this checkout, a vcs repository (a bare clone of this checkout's
 * HEAD: the committed code), and the extension package weft/weft-ext built the way PIE builds it.
 * The application's composer.json asks for weft/weft only; its dependencies come from the registry.
 */
final class FreshAppTest extends TestCase
{
    private const ROOT = __DIR__ . '/../../..';
    private const APP = <<<'PHP'
        <?php
        use Weft\Http\Message\{Request, Response};

        return static fn (Request $request): Response => new Response(200, ['Content-Type' => 'text/plain'], 'fresh app on ' . PHP_VERSION);
        PHP;

    private string $dir = '';
    /** @var list<array{resource, int}> */
    private array $servers = [];

    protected function setUp(): void
    {
        foreach (['composer', 'git', 'curl'] as $tool) {
            if (\trim((string) \shell_exec('command -v ' . $tool)) === '') {
                self::markTestSkipped("$tool is not installed");
            }
        }
        $this->dir = \sys_get_temp_dir() . '/weft-fresh-' . \bin2hex(\random_bytes(4));
        \mkdir($this->dir . '/app', 0o755, true);
        \file_put_contents($this->dir . '/app/composer.json', "{\n    \"name\": \"acme/fresh-app\",\n    \"require\": {}\n}\n");
        \file_put_contents($this->dir . '/app/app.php', self::APP);
    }

    protected function tearDown(): void
    {
        foreach ($this->servers as [$process, $pid]) {
            @\posix_kill(-$pid, \SIGKILL);
            \proc_close($process);
        }
        if ($this->dir !== '' && \is_dir($this->dir)) {
            $this->exec(['rm', '-rf', $this->dir]);
        }
    }

    public function testAPathRepositoryInstallServes(): void
    {
        // The commands of docs/installing.md, as a user types them.
        $this->composer(['config', 'repositories.weft', 'path', (string) \realpath(self::ROOT)]);
        $this->composer(['require', 'weft/weft:@dev']);
        self::assertFileExists($this->dir . '/app/vendor/bin/weft');
        $require = \json_decode((string) \file_get_contents($this->dir . '/app/composer.json'), true)['require'];
        self::assertSame(['weft/weft'], \array_keys($require));

        [$port] = $this->serve();
        self::assertSame('fresh app on ' . \PHP_VERSION, $this->curl($port));
        // The symlinked checkout is Weft's own: its extension builds there, with its own script.
        self::assertStringContainsString('Usage: bin/weft ext:install', $this->exec([\PHP_BINARY, 'vendor/bin/weft', 'ext:install', '--help']));
    }

    public function testAVcsRepositoryInstallBuildsAndEnablesTheExtension(): void
    {
        if (!\is_dir(self::ROOT . '/.git') && !\is_file(self::ROOT . '/.git')) {
            self::markTestSkipped('this copy of Weft is not a git checkout');
        }
        if (\trim((string) \shell_exec('command -v phpize' . \PHP_MAJOR_VERSION . '.' . \PHP_MINOR_VERSION . ' phpize')) === '') {
            self::markTestSkipped('phpize is missing (php' . \PHP_MAJOR_VERSION . '.' . \PHP_MINOR_VERSION . '-dev)');
        }
        if ($this->exec([\PHP_BINARY, '-r', 'echo (int) extension_loaded("weft");']) === '1') {
            self::markTestSkipped("this machine's PHP loads a weft extension from its own ini files");
        }
        // A bare clone stands for the published repository; its branch holds this checkout's HEAD.
        $this->exec(['git', 'clone', '--quiet', '--bare', (string) \realpath(self::ROOT), $this->dir . '/weft.git']);
        $this->exec(['git', '-C', $this->dir . '/weft.git', 'branch', '--force', 'weft-test', \trim($this->exec(['git', '-C', self::ROOT, 'rev-parse', 'HEAD']))]);
        $this->composer(['config', 'repositories.weft', 'vcs', $this->dir . '/weft.git']);
        $this->composer(['require', 'weft/weft:dev-weft-test']);
        $weft = $this->dir . '/app/vendor/weft/weft';
        self::assertFalse(\is_link($weft), 'a vcs install is a copy of its own');
        self::assertFileExists("$weft/ext/config.m4");
        self::assertFileExists("$weft/scripts/build-ext.sh");
        self::assertFileDoesNotExist("$weft/ext/modules/weft.so");

        // Without the extension, the start-up check names the command for this install.
        [$port, $log] = $this->serve();
        self::assertSame('fresh app on ' . \PHP_VERSION, $this->curl($port));
        self::assertStringContainsString('The weft extension is not loaded', $log);
        self::assertStringContainsString('Build it with: vendor/bin/weft ext:install', $log);
        self::assertStringContainsString('loop select', $log);
        $this->stopServers();
        $epoll = \proc_open(['vendor/bin/weft', 'serve', 'app.php', '--port', '0', '--loop', 'epoll'], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes, $this->dir . '/app', self::env());
        $out = (string) \stream_get_contents($pipes[1]);
        self::assertNotSame(0, \proc_close($epoll), $out);
        self::assertStringContainsString('Build it with `vendor/bin/weft ext:install`', $out);

        $conf = $this->dir . '/conf.d';   // created by ext:install
        $out = $this->exec([\PHP_BINARY, 'vendor/bin/weft', 'ext:install', '--ini-dir', $conf], timeout: 300);
        $so = (string) \realpath("$weft/ext/modules/weft.so");
        self::assertFileExists($so);
        self::assertStringContainsString("Built the weft extension: $so", $out);
        self::assertStringContainsString("export PHP_INI_SCAN_DIR=\":$conf\"", $out);
        self::assertStringContainsString("extension=$so", (string) \file_get_contents("$conf/30-weft.ini"));

        // `serve` loads the built module by itself ...
        [$port, $log] = $this->serve();
        self::assertSame('fresh app on ' . \PHP_VERSION, $this->curl($port));
        self::assertStringContainsString('Hooks on:', $log);
        self::assertStringContainsString('loop epoll', $log);
        $this->stopServers();

        // ... and any PHP through the ini file, which `serve` then does not load a second time.
        self::assertSame('1', $this->exec([\PHP_BINARY, '-r', 'echo (int) extension_loaded("weft");'], ['PHP_INI_SCAN_DIR' => ":$conf"]));
        [$port, $log] = $this->serve(['PHP_INI_SCAN_DIR' => ":$conf"]);
        self::assertSame('fresh app on ' . \PHP_VERSION, $this->curl($port));
        self::assertStringContainsString('loop epoll', $log);
        self::assertStringNotContainsString('already loaded', $log);
        $this->stopServers();

        // --enable writes into the directory PHP scans (here one given by PHP_INI_SCAN_DIR, so that
        // the test leaves /etc/php alone); the module is up to date, so nothing is rebuilt.
        \mkdir($this->dir . '/scanned');
        $out = $this->exec([\PHP_BINARY, 'vendor/bin/weft', 'ext:install', '--enable'], ['PHP_INI_SCAN_DIR' => ':' . $this->dir . '/scanned']);
        self::assertStringContainsString('Enabled: wrote ' . $this->dir . '/scanned/30-weft.ini', $out);
        self::assertStringContainsString('is true', $out);
    }

    public function testAReleaseArchiveCarriesTheExtensionSources(): void
    {
        if (!\is_dir(self::ROOT . '/.git') && !\is_file(self::ROOT . '/.git')) {
            self::markTestSkipped('this copy of Weft is not a git checkout');
        }
        // The registry's dist archive of a release is `git archive` of its tag: .gitattributes
        // export-ignore must leave what `weft ext:install` builds from.
        $files = \explode("\n", \trim($this->exec(['sh', '-c', 'git archive --format=tar HEAD | tar -t'], cwd: self::ROOT)));
        foreach (['bin/weft', 'composer.json', 'scripts/build-ext.sh', 'ext/config.m4', 'ext/composer.json', 'ext/weft.c', 'ext/php_weft.h', 'ext/weft_arginfo.h', 'src/Cli/ExtInstallCommand.php'] as $file) {
            self::assertContains($file, $files);
        }
    }

    public function testTheExtensionPackageBuildsTheWayPieBuildsIt(): void
    {
        $version = \PHP_MAJOR_VERSION . '.' . \PHP_MINOR_VERSION;
        $phpize = \trim((string) \shell_exec("command -v phpize$version"));
        $phpConfig = \trim((string) \shell_exec("command -v php-config$version"));
        if ($phpize === '' || $phpConfig === '') {
            self::markTestSkipped("phpize is missing (php$version-dev)");
        }
        // The package's files as a release carries them: what git tracks in ext/, no build output.
        $package = $this->dir . '/weft-ext';
        \mkdir($package);
        foreach (\explode("\0", \trim($this->exec(['git', '-C', self::ROOT, 'ls-files', '-z', 'ext']), "\0")) as $file) {
            \copy(self::ROOT . '/' . $file, $package . '/' . \basename($file));
        }
        $manifest = \json_decode((string) \file_get_contents("$package/composer.json"), true, 512, \JSON_THROW_ON_ERROR);
        self::assertSame('php-ext', $manifest['type']);
        self::assertSame('weft', $manifest['php-ext']['extension-name']);
        // Composer accepts the manifest; the only remark an older Composer (before its schema knew PIE's
        // section) makes is that it does not know php-ext.
        $out = $this->exec(['composer', 'validate', '--no-check-publish', "$package/composer.json"]);
        foreach (\preg_split('/\R/', $out) ?: [] as $line) {
            if (\str_starts_with($line, '- ')) {
                self::assertStringContainsString('The property php-ext is not defined', $line);
            }
        }
        // Every configure option PIE may pass is one config.m4 declares.
        \preg_match_all('/PHP_ARG_ENABLE\(\[?(\w+)/', (string) \file_get_contents("$package/config.m4"), $m);
        foreach ($manifest['php-ext']['configure-options'] as $option) {
            self::assertContains(\preg_replace('/^(enable|disable)-/', '', $option['name']), $m[1]);
        }

        // PIE resolves the package with Composer, then runs phpize, configure, make in its directory.
        $this->composer(['config', 'repositories.weft-ext', '{"type": "path", "url": "' . $package . '", "options": {"symlink": false}}']);
        $this->composer(['require', 'weft/weft-ext:@dev']);
        $dir = $this->dir . '/app/vendor/weft/weft-ext';
        $this->exec([$phpize], cwd: $dir, timeout: 120);
        $this->exec(['./configure', '--enable-weft', "--with-php-config=$phpConfig"], cwd: $dir, timeout: 120);
        $this->exec(['make', '-j2'], cwd: $dir, timeout: 300);
        self::assertSame('1', $this->exec([\PHP_BINARY, '-n', '-d', "extension=$dir/modules/weft.so", '-r', 'echo (int) class_exists("Weft\\\\Ext\\\\Epoll");']));
        // `make install` puts it into PHP's extension_dir (under a staging root here, not the real one).
        $this->exec(['make', 'install', 'INSTALL_ROOT=' . $this->dir . '/root'], cwd: $dir);
        self::assertFileExists($this->dir . '/root' . \trim($this->exec([$phpConfig, '--extension-dir'])) . '/weft.so');
    }

    /** @param list<string> $args */
    private function composer(array $args): string
    {
        return $this->exec(\array_merge(['composer', '--no-interaction'], $args), timeout: 300);
    }

    /**
     * `vendor/bin/weft serve app.php --port 0`, as a user runs it; returns its port and start-up log.
     *
     * @param array<string, string> $env @return array{int, string}
     */
    private function serve(array $env = []): array
    {
        $process = \proc_open(
            ['setsid', 'vendor/bin/weft', 'serve', 'app.php', '--port', '0', '--workers', '1', '--pid-file', $this->dir . '/weft.pid'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]],
            $pipes,
            $this->dir . '/app',
            $env + self::env(),
        );
        self::assertIsResource($process);
        $pid = (int) \proc_get_status($process)['pid'];
        $this->servers[] = [$process, $pid];
        \stream_set_blocking($pipes[1], false);
        $log = '';
        $deadline = \microtime(true) + 30;
        while (!\preg_match('/^READY (\d+)$/m', $log, $m)) {
            if (\microtime(true) > $deadline || !\proc_get_status($process)['running']) {
                self::fail("vendor/bin/weft serve did not become ready:\n$log");
            }
            $read = [$pipes[1]];
            $w = $e = null;
            if (@\stream_select($read, $w, $e, 0, 100_000)) {
                $log .= (string) \fread($pipes[1], 65536);
            }
        }
        return [(int) $m[1], $log];
    }

    private function stopServers(): void
    {
        foreach ($this->servers as [$process, $pid]) {
            @\posix_kill($pid, \SIGTERM);
            $deadline = \microtime(true) + 15;
            while (\proc_get_status($process)['running'] && \microtime(true) < $deadline) {
                \usleep(20_000);
            }
            @\posix_kill(-$pid, \SIGKILL);
            \proc_close($process);
        }
        $this->servers = [];
    }

    private function curl(int $port): string
    {
        return $this->exec(['curl', '--silent', '--show-error', '--fail', '--max-time', '10', "http://127.0.0.1:$port/"]);
    }

    /**
     * Runs a command to its end and returns its output; fails the test with that output when it fails.
     *
     * @param list<string> $command @param array<string, string> $env
     */
    private function exec(array $command, array $env = [], ?string $cwd = null, float $timeout = 60): string
    {
        $process = \proc_open(
            \array_merge(['timeout', (string) (int) $timeout], $command),
            [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]],
            $pipes,
            $cwd ?? $this->dir . '/app',
            $env + self::env(),
        );
        self::assertIsResource($process);
        $out = (string) \stream_get_contents($pipes[1]);
        \fclose($pipes[1]);
        $code = \proc_close($process);
        self::assertSame(0, $code, \implode(' ', $command) . " failed ($code):\n$out");
        return $out;
    }

    /** @return array<string, string> */
    private static function env(): array
    {
        $env = \getenv();
        // The server under test decides about the extension itself: nothing from the test runner's PHP.
        unset($env['WEFT_NO_REEXEC'], $env['PHP_INI_SCAN_DIR'], $env['WEFT_LOOP']);
        return ['COMPOSER_ALLOW_SUPERUSER' => '1', 'COMPOSER_NO_INTERACTION' => '1'] + $env;
    }
}
