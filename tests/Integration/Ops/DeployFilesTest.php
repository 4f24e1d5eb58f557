<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\ServerProcess;

/** What can be checked of deploy/ on a machine without docker or a running systemd. */
final class DeployFilesTest extends TestCase
{
    private const DEPLOY = __DIR__ . '/../../../deploy';

    private const UNIT = self::DEPLOY . '/weft@.service';

    /** The template as systemd reads it for two instances, pointed at this checkout (paths and user of a real installation rewritten). */
    public function testTheTemplateUnitVerifiesForAnyInstance(): void
    {
        if (!\is_executable('/usr/bin/systemd-analyze')) {
            self::markTestSkipped('systemd-analyze is not installed');
        }
        $unit = (string) \file_get_contents(self::UNIT);
        self::assertStringContainsString("Type=notify\n", $unit);
        self::assertStringContainsString("ExecReload=/opt/weft/bin/weft reload --pid-file /run/weft/%i/weft.pid\n", $unit);
        $dir = self::localUnitDirectory();
        try {
            foreach (['alpha', 'beta'] as $instance) {
                $output = [];
                \exec('SYSTEMD_UNIT_PATH=' . \escapeshellarg("$dir:") . ' /usr/bin/systemd-analyze verify ' . \escapeshellarg("weft@$instance.service") . ' 2>&1', $output, $code);
                self::assertSame(0, $code, \implode("\n", $output));
                self::assertSame([], \array_values(\array_filter($output, static fn ($l) => \str_contains($l, 'weft@'))), \implode("\n", $output));
            }
        } finally {
            \exec('rm -rf ' . \escapeshellarg($dir));
        }
    }

    /**
     * Copies of one unit shared RuntimeDirectory=weft: stopping one removed the others' pid files and
     * control sockets. Every path an instance owns, and its configuration (port, metrics), is its own.
     */
    public function testEachInstanceOwnsItsDirectoriesConfigurationAndLog(): void
    {
        $unit = (string) \file_get_contents(self::UNIT);
        $seen = [];
        foreach (['alpha', 'beta'] as $instance) {
            $settings = self::settings(\str_replace('%i', $instance, $unit));
            self::assertSame("weft/$instance", $settings['RuntimeDirectory'], 'RuntimeDirectory');
            self::assertSame("weft/$instance", $settings['LogsDirectory'], 'LogsDirectory');
            self::assertSame("WEFT_CONFIG=/etc/weft/$instance.php", $settings['Environment']);
            self::assertMatchesRegularExpression('~--pid-file (\S+) --log-file (\S+)$~', $settings['ExecStart']);
            \preg_match('~--pid-file (\S+) --log-file (\S+)$~', $settings['ExecStart'], $m);
            [, $pidFile, $logFile] = $m;
            self::assertSame("/run/{$settings['RuntimeDirectory']}", \dirname($pidFile), 'the pid file (and its control socket) in the runtime directory');
            self::assertSame("/var/log/{$settings['LogsDirectory']}", \dirname($logFile), 'the log in the logs directory');
            self::assertStringEndsWith("--pid-file $pidFile", $settings['ExecReload']);
            self::assertTrue(\fnmatch('/var/log/weft/*/*.log', $logFile), 'deploy/logrotate.conf rotates it');
            $seen[] = [$settings['RuntimeDirectory'], $settings['LogsDirectory'], $settings['Environment'], $pidFile, $logFile, $settings['SyslogIdentifier']];
        }
        foreach ($seen[0] as $i => $value) {
            self::assertNotSame($value, $seen[1][$i]);
        }
    }

    /**
     * Two instances run from the template's own ExecStart, Environment and directories (rooted in a
     * temporary directory), each with its configuration file: both serve at once (own port, own metrics
     * port), and stopping one as systemd does (SIGTERM to the main process, then its RuntimeDirectory
     * removed) leaves the other's pid file, control socket and log alone.
     */
    public function testTwoInstancesServeSideBySideAndStopAlone(): void
    {
        $root = \sys_get_temp_dir() . '/weft-instances-' . \bin2hex(\random_bytes(4));
        $unit = (string) \file_get_contents(self::UNIT);
        $map = ['/opt/weft/bin/weft' => \realpath(__DIR__ . '/../../../bin/weft'), '/run/' => "$root/run/", '/var/log/' => "$root/log/", '/etc/weft/' => "$root/etc/weft/"];
        $instances = [];
        try {
            \mkdir("$root/etc/weft", 0700, true);
            foreach (['alpha', 'beta'] as $instance) {
                $settings = self::settings(\strtr(\str_replace('%i', $instance, $unit), $map));
                \mkdir("$root/run/{$settings['RuntimeDirectory']}", 0750, true);   // what systemd creates
                \mkdir("$root/log/{$settings['LogsDirectory']}", 0750, true);
                [$variable, $config] = \explode('=', $settings['Environment'], 2);
                $port = self::freePort();
                $metrics = self::freePort();
                \file_put_contents($config, "<?php return ['app' => " . \var_export(\realpath(__DIR__ . '/../../../examples/hello.php'), true)
                    . ", 'host' => '127.0.0.1', 'port' => $port, 'metrics' => '127.0.0.1:$metrics', 'workers' => 1];\n");
                $process = \proc_open(\explode(' ', $settings['ExecStart']), [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes, null, [$variable => $config] + \getenv());
                $instances[$instance] = ['process' => $process, 'out' => $pipes[1], 'port' => $port, 'metrics' => $metrics, 'settings' => $settings];
            }
            foreach ($instances as $instance => $i) {
                $line = (string) \fgets($i['out']);
                if ($line !== "READY {$i['port']}\n") {
                    self::fail("$instance did not start: $line" . \stream_get_contents($i['out']));
                }
                self::assertSame('Hello World', \file_get_contents("http://127.0.0.1:{$i['port']}/"));
                self::assertSame(200, self::statusOf("http://127.0.0.1:{$i['metrics']}/health"), "$instance: its own metrics port");
            }
            $beta = $instances['beta']['settings'];
            \preg_match('~--pid-file (\S+) --log-file (\S+)$~', $beta['ExecStart'], $m);
            [, $betaPid, $betaLog] = $m;

            // systemctl stop weft@alpha: SIGTERM to the main process, then its runtime directory goes.
            $alpha = $instances['alpha'];
            \posix_kill(\proc_get_status($alpha['process'])['pid'], \SIGTERM);
            ServerProcess::waitFor(fn () => !\proc_get_status($alpha['process'])['running'], 20, 'alpha to stop');
            \exec('rm -rf ' . \escapeshellarg("$root/run/{$alpha['settings']['RuntimeDirectory']}"));

            self::assertFileExists($betaPid);
            self::assertFileExists("$betaPid.sock");
            [$code, $out] = ServerProcess::cli(['status', '--pid-file', $betaPid], 20);
            self::assertSame(0, $code, $out);
            $reload = \explode(' ', $beta['ExecReload']);
            [$code, $out] = ServerProcess::cli(\array_slice($reload, 1), 30);
            self::assertSame(0, $code, $out);
            self::assertSame('Hello World', \file_get_contents("http://127.0.0.1:{$instances['beta']['port']}/"));
            self::assertStringContainsString('Weft listening', (string) \file_get_contents($betaLog));
            self::assertStringNotContainsString('Weft stopped', (string) \file_get_contents($betaLog));
        } finally {
            foreach ($instances as $i) {
                if (\proc_get_status($i['process'])['running']) {
                    \posix_kill(\proc_get_status($i['process'])['pid'], \SIGTERM);
                    ServerProcess::waitFor(fn () => !\proc_get_status($i['process'])['running'], 20, 'an instance to stop');
                }
                \proc_close($i['process']);
            }
            \exec('rm -rf ' . \escapeshellarg($root));
        }
    }

    /** `systemd-analyze security` scored the old unit 8.5 EXPOSED; the template must stay "OK" (at most 4.0). */
    public function testTheTemplateUnitIsHardened(): void
    {
        if (!\is_executable('/usr/bin/systemd-analyze')) {
            self::markTestSkipped('systemd-analyze is not installed');
        }
        $dir = self::localUnitDirectory();
        try {
            \copy("$dir/weft@.service", "$dir/weft@alpha.service");
            \exec('/usr/bin/systemd-analyze security --offline=yes --no-pager ' . \escapeshellarg("$dir/weft@alpha.service") . ' 2>&1', $output, $code);
        } finally {
            \exec('rm -rf ' . \escapeshellarg($dir));
        }
        $text = \implode("\n", $output);
        self::assertMatchesRegularExpression('/Overall exposure level for weft@alpha\.service: (\d+\.\d+) (\S+)/', $text);
        \preg_match('/Overall exposure level for weft@alpha\.service: (\d+\.\d+) (\S+)/', $text, $m);
        self::assertLessThanOrEqual(4.0, (float) $m[1], $text);
        self::assertSame('OK', $m[2], $text);
    }

    private static function freePort(): int
    {
        $socket = \stream_socket_server('tcp://127.0.0.1:0');
        $name = (string) \stream_socket_get_name($socket, false);
        \fclose($socket);
        return (int) \substr($name, (int) \strrpos($name, ':') + 1);
    }

    private static function statusOf(string $url): int
    {
        $http_response_header = [];
        @\file_get_contents($url, false, \stream_context_create(['http' => ['timeout' => 5, 'ignore_errors' => true]]));
        return \preg_match('~^HTTP/\S+ (\d{3})~', $http_response_header[0] ?? '', $m) === 1 ? (int) $m[1] : 0;
    }

    /** @return array<string, string> the last value of each setting */
    private static function settings(string $unit): array
    {
        \preg_match_all('/^([A-Za-z]+)=(.*)$/m', $unit, $m, \PREG_SET_ORDER);
        $settings = [];
        foreach ($m as [, $key, $value]) {
            $settings[$key] = $value;
        }
        return $settings;
    }

    /** A directory holding the template, its paths pointed at this checkout and its user at root (who exists here). */
    private static function localUnitDirectory(): string
    {
        $local = \str_replace(
            ['/opt/weft/bin/weft', 'WorkingDirectory=/srv/app', 'User=weft', 'Group=weft'],
            [\realpath(__DIR__ . '/../../../bin/weft'), 'WorkingDirectory=/tmp', 'User=root', 'Group=root'],
            (string) \file_get_contents(self::UNIT),
        );
        $dir = \sys_get_temp_dir() . '/weft-unit-' . \bin2hex(\random_bytes(4));
        \mkdir($dir, 0700);
        \file_put_contents("$dir/weft@.service", $local);
        return $dir;
    }

    public function testTheUnitsReloadCommandWaitsAndReportsAFailedReload(): void
    {
        \preg_match('/^ExecReload=(.+)$/m', \str_replace('%i', 'main', (string) \file_get_contents(self::UNIT)), $m);
        $dir = \sys_get_temp_dir() . '/weft-unit-' . \bin2hex(\random_bytes(4));
        \mkdir($dir, 0700);
        $app = "$dir/app.php";
        \file_put_contents($app, "<?php return static fn () => new Weft\\Http\\Message\\Response(200, [], 'v1');\n");
        $server = new ServerProcess([$app, '--workers', '1'], [], 20.0, [], "$dir/weft.pid");
        try {
            // The command as systemd runs it (no shell), pointed at this checkout and this server.
            $command = \str_replace(['/opt/weft/bin/weft', '/run/weft/main/weft.pid'], [\realpath(__DIR__ . '/../../../bin/weft'), "$dir/weft.pid"], $m[1]);
            $run = static function () use ($command): array {
                $output = [];
                \exec(\implode(' ', \array_map('escapeshellarg', \explode(' ', $command))) . ' 2>&1', $output, $code);
                return [$code, \implode("\n", $output)];
            };
            \file_put_contents($app, "<?php return static fn () => new Weft\\Http\\Message\\Response(200, [], 'v2');\n");
            [$code, $out] = $run();
            self::assertSame(0, $code, $out);
            self::assertStringContainsString('reloaded', $out);
            self::assertSame('v2', \file_get_contents("http://{$server->address()}/"), 'the new code serves when the command returns');

            \file_put_contents($app, "<?php return static fn () => ;\n");
            [$code, $out] = $run();
            self::assertNotSame(0, $code, 'systemctl reload fails when the new code cannot load');
            self::assertStringContainsString('reload failed', $out);
            self::assertSame('v2', \file_get_contents("http://{$server->address()}/"), 'the old workers keep serving');
        } finally {
            $server->stop();
            \exec('rm -rf ' . \escapeshellarg($dir));
        }
    }

    public function testLogrotateSignalsTheUnitsMainProcessNotAPidFromAFile(): void
    {
        // logrotate runs as root; /run/weft/NAME/weft.pid is writable by the service's user.
        $conf = (string) \file_get_contents(self::DEPLOY . '/logrotate.conf');
        \preg_match('/postrotate\n(.*?)endscript/s', $conf, $m);
        $script = \implode("\n", \array_filter(\array_map('trim', \explode("\n", $m[1])), static fn ($l) => $l !== '' && $l[0] !== '#'));
        // SIGUSR1 reopens the logs (nginx's and php-fpm's convention); HUP and USR2 would reload.
        self::assertSame("systemctl kill --kill-whom=main --signal=SIGUSR1 'weft@*.service' 2>/dev/null || true", $script);
        self::assertFileExists(self::UNIT);
        self::assertStringContainsString("\n/var/log/weft/*/*.log {\n", $conf);
        self::assertStringContainsString('LogsDirectory=weft/%i', (string) \file_get_contents(self::UNIT));
    }

    public function testTheExampleConfigurationIsValid(): void
    {
        [$code, $out] = ServerProcess::cli(['config', '--config', self::DEPLOY . '/weft.config.php', '--json']);
        self::assertSame(0, $code, $out);
        $config = \json_decode($out, true, 512, \JSON_THROW_ON_ERROR);
        self::assertSame('/srv/app/public/index.php', $config['app']);
        self::assertSame('127.0.0.1:9100', $config['options']['metrics']['value']);
        self::assertStringStartsWith('file ', $config['options']['log-format']['source']);
    }

    public function testTheComposeFileUsesOnlyRealOptionVariables(): void
    {
        $compose = (string) \file_get_contents(self::DEPLOY . '/docker-compose.yml');
        \preg_match_all('/^\s+(WEFT_[A-Z_]+):\s*(.+)$/m', $compose, $m, \PREG_SET_ORDER);
        self::assertNotEmpty($m);
        $env = [];
        foreach ($m as [, $name, $value]) {
            $env[$name] = \trim($value, " \"'");
        }
        // The variables are accepted as they are written there.
        $process = \proc_open([\PHP_BINARY, __DIR__ . '/../../../bin/weft', 'config', '--json'], [1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes, null, $env + ['PATH' => (string) \getenv('PATH')]);
        $out = (string) \stream_get_contents($pipes[1]);
        self::assertSame(0, \proc_close($process), $out);
        $options = \json_decode($out, true, 512, \JSON_THROW_ON_ERROR)['options'];
        foreach ($env as $name => $value) {
            $option = \strtolower(\str_replace('_', '-', \substr($name, 5)));
            self::assertSame("env $name", $options[$option]['source']);
        }
    }
}
