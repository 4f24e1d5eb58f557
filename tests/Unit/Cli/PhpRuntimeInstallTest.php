<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Cli;

use PHPUnit\Framework\TestCase;
use Weft\Cli\PhpRuntime;

/**
 * Where this copy of Weft is (a checkout or an application's vendor/) and how the extension gets
 * loaded: in a fresh PHP process each, since both depend on the files PHP started with.
 */
final class PhpRuntimeInstallTest extends TestCase
{
    private const ROOT = __DIR__ . '/../../..';

    private string $tmp = '';

    protected function tearDown(): void
    {
        if ($this->tmp !== '') {
            \exec('rm -rf ' . \escapeshellarg($this->tmp));
        }
    }

    public function testTheBenchRunsItsServersWithTheJitSettingsServeSets(): void
    {
        $serve = [];
        foreach (\array_chunk(PhpRuntime::OPCACHE_FLAGS, 2) as [, $setting]) {
            $serve[] = $setting;
        }
        self::assertSame([], \array_diff(\Weft\Bench\Environment::PHP_FLAGS, $serve), 'every bench flag is one serve sets');
        foreach (PhpRuntime::JIT_BUDGETS as $name => $least) {
            self::assertContains("$name=$least", \Weft\Bench\Environment::PHP_FLAGS);
        }
    }

    public function testWeftsOwnCheckoutBuildsWithItsScript(): void
    {
        self::assertNull(PhpRuntime::vendorDir());
        self::assertSame('bash scripts/build-ext.sh', PhpRuntime::buildCommand());
        self::assertSame(\realpath(self::ROOT), \realpath(PhpRuntime::root()));
    }

    public function testAVendorCopyBuildsWithExtInstall(): void
    {
        // A copy of src/ laid out as Composer lays out a package: APP/vendor/weft/weft.
        $this->tmp = \sys_get_temp_dir() . '/weft-vendor-' . \bin2hex(\random_bytes(4));
        \mkdir($this->tmp . '/vendor/composer', 0o755, true);
        \mkdir($this->tmp . '/vendor/weft/weft', 0o755, true);
        \file_put_contents($this->tmp . '/vendor/autoload.php', '<?php');
        \exec('cp -r ' . \escapeshellarg(self::ROOT . '/src') . ' ' . \escapeshellarg($this->tmp . '/vendor/weft/weft/'));
        $code = 'require $argv[1] . "/src/Cli/PhpRuntime.php"; echo Weft\Cli\PhpRuntime::vendorDir(), "|", Weft\Cli\PhpRuntime::buildCommand();';
        self::assertSame($this->tmp . '/vendor|vendor/bin/weft ext:install', $this->php(['-r', $code, $this->tmp . '/vendor/weft/weft']));
    }

    public function testAnExtensionLoadedByAnIniFileIsNotLoadedTwiceOnRestart(): void
    {
        $so = PhpRuntime::builtExtension();
        if ($so === null) {
            self::markTestSkipped('the weft extension is not built (bash scripts/build-ext.sh)');
        }
        $this->tmp = \sys_get_temp_dir() . '/weft-ini-' . \bin2hex(\random_bytes(4));
        \mkdir($this->tmp);
        \file_put_contents($this->tmp . '/30-weft.ini', "extension=$so\n");
        $code = 'require $argv[1] . "/vendor/autoload.php"; var_export([extension_loaded("weft"), Weft\Cli\PhpRuntime::extensionInIni(), in_array("extension=' . $so . '", Weft\Cli\PhpRuntime::reexecFlags(["weft", "serve", "app.php"]), true)]);';
        self::assertSame('array ( 0 => true, 1 => true, 2 => false, )', \preg_replace('/\s+/', ' ', $this->php(['-r', $code, self::ROOT], ['PHP_INI_SCAN_DIR' => ':' . $this->tmp])));
        // Without the ini file, the restart is what loads it.
        self::assertSame('array ( 0 => false, 1 => false, 2 => true, )', \preg_replace('/\s+/', ' ', $this->php(['-r', $code, self::ROOT])));
    }

    public function testARestartKeepsTheJitBudgetsNoLowerThanWeftsOrTheUsersOwn(): void
    {
        if (PhpRuntime::builtExtension() === null) {
            self::markTestSkipped('the weft extension is not built (bash scripts/build-ext.sh)');
        }
        // Opcache on and the extension built but not loaded: serve restarts PHP to load it, keeping this
        // PHP's opcache settings, with each JIT budget at least Weft's and a higher one of the user's kept.
        $code = 'require $argv[1] . "/vendor/autoload.php"; echo implode(" ", Weft\Cli\PhpRuntime::reexecFlags(["weft", "serve", "app.php"]));';
        $flags = $this->php(['-d', 'opcache.enable_cli=1', '-d', 'opcache.jit=tracing', '-d', 'opcache.jit_buffer_size=32M',
            '-d', 'opcache.jit_max_exit_counters=65536', '-d', 'opcache.jit_max_side_traces=16', '-r', $code, self::ROOT]);
        self::assertStringContainsString('-d opcache.jit_buffer_size=32M', $flags);
        self::assertStringContainsString('-d opcache.jit_max_exit_counters=65536', $flags);
        self::assertStringContainsString('-d opcache.jit_max_side_traces=' . PhpRuntime::JIT_SIDE_TRACES, $flags);
        self::assertStringContainsString('-d opcache.jit_max_root_traces=' . PhpRuntime::JIT_ROOT_TRACES, $flags);
    }

    public function testAServerStartedWithWeftsSettingsAndNoStrayDescriptorsDoesNotRestart(): void
    {
        $so = PhpRuntime::builtExtension();
        if ($so === null || !\is_executable('/bin/bash')) {
            self::markTestSkipped('the weft extension is not built (bash scripts/build-ext.sh)');
        }
        // A script file, as bin/weft is: PHP keeps it open while it runs, and with opcache on a lock file
        // too. Neither is inherited; a descriptor the starting process left open (7 here) is.
        $this->tmp = \sys_get_temp_dir() . '/weft-fds-' . \bin2hex(\random_bytes(4));
        \mkdir($this->tmp);
        \file_put_contents($this->tmp . '/start.php', '<?php require $argv[1] . "/vendor/autoload.php"; echo \\count(Weft\\Cli\\PhpRuntime::inheritedDescriptors()), " ", \\json_encode(Weft\\Cli\\PhpRuntime::reexecFlags(["weft", "serve", "app.php"]));');
        $closer = PhpRuntime::SHED_DESCRIPTORS;
        $php = [\PHP_BINARY, ...PhpRuntime::OPCACHE_FLAGS, '-d', "extension=$so", $this->tmp . '/start.php', self::ROOT];
        $run = function (string $script) use ($php): string {
            $process = \proc_open(['/bin/bash', '-c', $script, 'weft', ...$php], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes, null, ['PATH' => (string) \getenv('PATH')]);
            $out = (string) \stream_get_contents($pipes[1]);
            self::assertSame(0, \proc_close($process), $out);
            return $out;
        };
        self::assertSame('0 []', $run($closer . 'exec "$@"'), 'opcache already on, the extension loaded: nothing to restart for');
        self::assertSame('1 ', \substr($run($closer . 'exec 7</dev/null; exec "$@"'), 0, 2), 'a stray descriptor is shed by a restart');
    }

    /** @param list<string> $args @param array<string, string> $env */
    private function php(array $args, array $env = []): string
    {
        $base = \getenv();
        unset($base['PHP_INI_SCAN_DIR'], $base['WEFT_NO_REEXEC']);
        $process = \proc_open(\array_merge([\PHP_BINARY], $args), [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes, null, $env + $base);
        $out = (string) \stream_get_contents($pipes[1]);
        self::assertSame(0, \proc_close($process), $out);
        return $out;
    }
}
