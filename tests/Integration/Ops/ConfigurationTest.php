<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\ServerProcess;

/**
 * Configuration layers as a user runs them: `bin/weft config` and `bin/weft serve` with a PHP or INI
 * file, WEFT_* variables and the command line, and CPU detection under `taskset`.
 */
final class ConfigurationTest extends TestCase
{
    private const APP = __DIR__ . '/../fixtures/app.php';
    private string $dir;

    protected function setUp(): void
    {
        $this->dir = \sys_get_temp_dir() . '/weft-config-' . \bin2hex(\random_bytes(4));
        \mkdir($this->dir);
    }

    protected function tearDown(): void
    {
        \array_map('unlink', \glob($this->dir . '/*') ?: []);
        @\rmdir($this->dir);
    }

    public function testPrecedenceIsCommandLineThenEnvironmentThenFileThenDefaults(): void
    {
        \file_put_contents("$this->dir/weft.config.php", "<?php return ['workers' => 3, 'port' => 7001, 'max_body' => '16M', 'idle-timeout' => 5, 'debug' => true, 'app' => 'app.php'];");
        [$code, $out] = self::weft(['config', '--config', "$this->dir/weft.config.php", '--idle-timeout', '7', '--json'], ['WEFT_PORT' => '7002', 'WEFT_IDLE_TIMEOUT' => '6', 'WEFT_MODE' => 'sync']);
        self::assertSame(0, $code, $out);
        $config = \json_decode($out, true, 512, \JSON_THROW_ON_ERROR);
        $options = $config['options'];
        self::assertSame([3, "file $this->dir/weft.config.php"], [$options['workers']['value'], $options['workers']['source']]);
        self::assertSame([7002, 'env WEFT_PORT'], [$options['port']['value'], $options['port']['source']]);
        self::assertSame([7, 'command line'], [$options['idle-timeout']['value'], $options['idle-timeout']['source']]);
        self::assertSame(['sync', 'env WEFT_MODE'], [$options['mode']['value'], $options['mode']['source']]);
        self::assertSame(16 * 1024 * 1024, $options['max-body']['value']);
        self::assertTrue($options['debug']['value']);
        self::assertSame(['http', 'default'], [$options['protocol']['value'], $options['protocol']['source']]);
        self::assertSame(\realpath($this->dir) . '/app.php', $config['app']);
    }

    public function testTheTextReportNamesEachSource(): void
    {
        \file_put_contents("$this->dir/weft.ini", "; weft.ini\nworkers = 2\nmax-requests = 500\ndaemon = off\n");
        [$code, $out] = self::weft(['config', self::APP, '--config', "$this->dir/weft.ini", '--mode', 'sync'], ['WEFT_GRACE' => '3.5']);
        self::assertSame(0, $code, $out);
        self::assertMatchesRegularExpression('/^workers\s+2\s+file .*weft\.ini$/m', $out);
        self::assertMatchesRegularExpression('/^max-requests\s+500\s+file .*weft\.ini$/m', $out);
        self::assertMatchesRegularExpression('/^grace\s+3\.5\s+env WEFT_GRACE$/m', $out);
        self::assertMatchesRegularExpression('/^mode\s+sync\s+command line$/m', $out);
        self::assertMatchesRegularExpression('/^host\s+127\.0\.0\.1\s+default$/m', $out);
    }

    public function testErrorsNameTheSource(): void
    {
        \file_put_contents("$this->dir/typo.php", "<?php return ['wrokers' => 2];");
        [$code, $out] = self::weft(['config', '--config', "$this->dir/typo.php"]);
        self::assertSame(2, $code);
        self::assertStringContainsString("configuration file $this->dir/typo.php: unknown option 'wrokers'", $out);

        [$code, $out] = self::weft(['config'], ['WEFT_WORKERS' => 'four']);
        self::assertSame(2, $code);
        self::assertStringContainsString("environment variable WEFT_WORKERS: option '--workers' expects a whole number, got 'four'", $out);

        \file_put_contents("$this->dir/bad.ini", "mode = turbo\n");
        [$code, $out] = self::weft(['serve', self::APP, '--config', "$this->dir/bad.ini"]);
        self::assertSame(2, $code);
        self::assertStringContainsString("configuration file $this->dir/bad.ini: option '--mode' expects one of coroutine, sync, fpm, got 'turbo'", $out);

        // A range check made after merging still says where the value came from.
        [$code, $out] = self::weft(['serve', self::APP], ['WEFT_WORKERS' => '0']);
        self::assertSame(2, $code);
        self::assertStringContainsString("option '--workers' must be at least 1 (set by environment variable WEFT_WORKERS)", $out);

        \file_put_contents("$this->dir/scalar.php", '<?php return 42;');
        [$code, $out] = self::weft(['config', '--config', "$this->dir/scalar.php"]);
        self::assertSame(2, $code);
        self::assertStringContainsString('must return an array of options, it returned int', $out);

        [$code, $out] = self::weft(['config', '--config', "$this->dir/missing.php"]);
        self::assertSame(2, $code);
        self::assertStringContainsString('not found', $out);
    }

    public function testServeRunsWithTheFileAndTheEnvironment(): void
    {
        \file_put_contents("$this->dir/weft.config.php", "<?php return ['workers' => 1, 'mode' => 'sync', 'app' => " . \var_export(\realpath(self::APP), true) . '];');
        $server = new ServerProcess([], ['WEFT_CONFIG' => "$this->dir/weft.config.php", 'WEFT_WORKERS' => '2']);
        $status = $server->status();
        self::assertSame('sync', $status['master']['mode']);
        self::assertSame(2, $status['master']['workers']);
        self::assertSame("Hello World", \file_get_contents("http://{$server->address()}/"));
        $server->stop();
    }

    public function testListsAreArraysInAPhpFile(): void
    {
        \file_put_contents("$this->dir/weft.config.php", "<?php return ['hooks' => ['stream', 'sleep'], 'extra-methods' => ['FOO', 'BAR'], 'app' => 'app.php'];");
        [$code, $out] = self::weft(['config', '--config', "$this->dir/weft.config.php", '--json']);
        self::assertSame(0, $code, $out);
        $options = \json_decode($out, true, 512, \JSON_THROW_ON_ERROR)['options'];
        self::assertSame('stream,sleep', $options['hooks']['value']);
        self::assertSame(['FOO', 'BAR'], $options['extra-methods']['value']);
        \file_put_contents("$this->dir/weft.config.php", "<?php return ['workers' => [2], 'app' => 'app.php'];");
        [$code, $out] = self::weft(['config', '--config', "$this->dir/weft.config.php"]);
        self::assertSame(2, $code, $out);
        self::assertStringContainsString("option 'workers' must be a scalar, got array", $out);
    }

    public function testAnUnsetOptionIsNotPrintedLikeStdout(): void
    {
        [$code, $out] = self::weft(['config', self::APP]);
        self::assertSame(0, $code, $out);
        self::assertMatchesRegularExpression('/^access-log\s+\(default\)\s+default$/m', $out);
        self::assertMatchesRegularExpression('/^pid-file\s+\(default\)\s+default$/m', $out);
        [$code, $out] = self::weft(['config', self::APP, '--access-log', '-']);
        self::assertSame(0, $code, $out);
        self::assertMatchesRegularExpression('/^access-log\s+- \(stdout\)\s+command line$/m', $out);
    }

    public function testChoicesAreAcceptedInCapitalsAsTheHelpSpellsThem(): void
    {
        // `serve --help` prints "--log-level DEBUG|INFO|...", and environments are often written in capitals.
        $log = "$this->dir/server.log";
        $server = new ServerProcess([self::APP, '--workers', '1', '--log-format', 'JSON', '--log-file', $log, '--mode', 'Sync'], ['WEFT_LOG_LEVEL' => 'WARNING']);
        self::assertSame('sync', $server->status()['master']['mode']);
        $server->stop();
        $records = \array_map(static fn (string $line) => \json_decode($line, true, 512, \JSON_THROW_ON_ERROR), \file($log, \FILE_IGNORE_NEW_LINES));
        self::assertNotContains('info', \array_column($records, 'level'), 'no info record at WARNING');

        [$code, $out] = self::weft(['config', self::APP, '--json', '--access-log-format', 'Json'], ['WEFT_LOG_LEVEL' => 'WARNING']);
        self::assertSame(0, $code, $out);
        $options = \json_decode($out, true, 512, \JSON_THROW_ON_ERROR)['options'];
        self::assertSame(['warning', 'json'], [$options['log-level']['value'], $options['access-log-format']['value']]);
        [$code, $out] = self::weft(['config', self::APP, '--log-level', 'loud']);
        self::assertSame(2, $code, $out);
        self::assertStringContainsString("option '--log-level' expects one of debug, info, notice, warning, error, critical, alert, emergency, got 'loud'", $out);
    }

    public function testControlCommandsFindTheServerThroughTheConfiguration(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1']);
        $master = $server->masterPid();
        \file_put_contents("$this->dir/weft.config.php", '<?php return ' . \var_export(['pid-file' => $server->pidFile, 'workers' => 1], true) . ';');
        [$code, $out] = self::weft(['status', '--config', "$this->dir/weft.config.php", '--json']);
        self::assertSame(0, $code, $out);
        self::assertSame($master, \json_decode($out, true, 512, \JSON_THROW_ON_ERROR)['master']['pid']);
        [$code, $out] = self::weft(['status', '--json'], ['WEFT_PID_FILE' => $server->pidFile]);
        self::assertSame(0, $code, $out);
        [$code, $out] = self::weft(['stop'], ['WEFT_CONFIG' => "$this->dir/weft.config.php"]);
        self::assertSame(0, $code, $out);
        self::assertStringContainsString("stopped (master pid $master)", $out);
        ServerProcess::waitFor(static fn () => !$server->isRunning(), 10, 'the server to exit');
    }

    public function testTheDefaultWorkerCountFollowsTheCpuAffinity(): void
    {
        if (!\is_executable('/usr/bin/taskset')) {
            self::markTestSkipped('taskset is not installed');
        }
        [$code, $out] = self::weft(['config', '--json'], [], ['taskset', '-c', '0']);
        self::assertSame(0, $code, $out);
        $options = \json_decode($out, true, 512, \JSON_THROW_ON_ERROR)['options'];
        self::assertSame([1, 'default'], [$options['workers']['value'], $options['workers']['source']]);

        $nproc = (int) \shell_exec('nproc');
        [, $out] = self::weft(['config', '--json']);
        self::assertSame($nproc, \json_decode($out, true, 512, \JSON_THROW_ON_ERROR)['options']['workers']['value']);

        // And a real server started under taskset runs that many workers.
        $root = \dirname(__DIR__, 3);
        $pidFile = \sys_get_temp_dir() . '/weft-taskset-' . \bin2hex(\random_bytes(4)) . '.pid';
        $process = \proc_open(['setsid', 'taskset', '-c', '0', \PHP_BINARY, "$root/bin/weft", 'serve', self::APP, '--port', '0', '--pid-file', $pidFile], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes, $root, self::cleanEnv());
        try {
            \stream_set_blocking($pipes[1], false);
            $output = '';
            ServerProcess::waitFor(static function () use ($pipes, &$output) {
                $output .= (string) \fread($pipes[1], 4096);
                return \str_contains($output, 'READY ');
            }, 20, 'the server under taskset');
            [$code, $json] = ServerProcess::cli(['status', '--pid-file', $pidFile, '--json']);
            self::assertSame(0, $code, $json);
            $status = \json_decode($json, true, 512, \JSON_THROW_ON_ERROR);
            self::assertSame(1, $status['master']['workers']);
            self::assertCount(1, $status['workers']);
            ServerProcess::cli(['stop', '--pid-file', $pidFile]);
        } finally {
            $pid = \proc_get_status($process)['pid'];
            @\posix_kill(-$pid, \SIGKILL);
            \proc_close($process);
            @\unlink($pidFile);
        }
    }

    /** @return array{int, string} */
    private static function weft(array $args, array $env = [], array $prefix = []): array
    {
        $root = \dirname(__DIR__, 3);
        $command = \array_merge($prefix, [\PHP_BINARY, "$root/bin/weft"], $args);
        $process = \proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes, $root, $env + self::cleanEnv());
        $out = \stream_get_contents($pipes[1]);
        return [\proc_close($process), (string) $out];
    }

    /** The test's own environment without WEFT_* option variables, which would leak into the layers. */
    private static function cleanEnv(): array
    {
        return \array_filter(\getenv(), static fn (string $k) => !\str_starts_with($k, 'WEFT_') || $k === 'WEFT_NO_REEXEC', \ARRAY_FILTER_USE_KEY);
    }
}
