<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\ServerProcess;

/** What can be checked of deploy/ on a machine without docker or a running systemd. */
final class DeployFilesTest extends TestCase
{
    private const DEPLOY = __DIR__ . '/../../../deploy';

    public function testTheSystemdUnitVerifies(): void
    {
        if (!\is_executable('/usr/bin/systemd-analyze')) {
            self::markTestSkipped('systemd-analyze is not installed');
        }
        $unit = (string) \file_get_contents(self::DEPLOY . '/weft.service');
        self::assertStringContainsString("Type=notify\n", $unit);
        self::assertStringContainsString("ExecReload=/opt/weft/bin/weft reload --pid-file /run/weft/weft.pid\n", $unit);
        // The paths and user of a real installation, pointed at this checkout.
        $local = \str_replace(
            ['/opt/weft/bin/weft', 'WorkingDirectory=/srv/app', 'User=weft', 'Group=weft'],
            [\realpath(__DIR__ . '/../../../bin/weft'), 'WorkingDirectory=/tmp', 'User=root', 'Group=root'],
            $unit,
        );
        $file = \sys_get_temp_dir() . '/weft-verify-' . \bin2hex(\random_bytes(4)) . '.service';
        \file_put_contents($file, $local);
        try {
            \exec('/usr/bin/systemd-analyze verify ' . \escapeshellarg($file) . ' 2>&1', $output, $code);
        } finally {
            \unlink($file);
        }
        self::assertSame(0, $code, \implode("\n", $output));
        self::assertSame([], \array_values(\array_filter($output, static fn ($l) => \str_contains($l, \basename($file)))), \implode("\n", $output));
    }

    public function testTheUnitsReloadCommandWaitsAndReportsAFailedReload(): void
    {
        \preg_match('/^ExecReload=(.+)$/m', (string) \file_get_contents(self::DEPLOY . '/weft.service'), $m);
        $dir = \sys_get_temp_dir() . '/weft-unit-' . \bin2hex(\random_bytes(4));
        \mkdir($dir, 0700);
        $app = "$dir/app.php";
        \file_put_contents($app, "<?php return static fn () => new Weft\\Http\\Message\\Response(200, [], 'v1');\n");
        $server = new ServerProcess([$app, '--workers', '1'], [], 20.0, [], "$dir/weft.pid");
        try {
            // The command as systemd runs it (no shell), pointed at this checkout and this server.
            $command = \str_replace(['/opt/weft/bin/weft', '/run/weft/weft.pid'], [\realpath(__DIR__ . '/../../../bin/weft'), "$dir/weft.pid"], $m[1]);
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
        // logrotate runs as root; /run/weft/weft.pid is writable by the service's user.
        $conf = (string) \file_get_contents(self::DEPLOY . '/logrotate.conf');
        \preg_match('/postrotate\n(.*?)endscript/s', $conf, $m);
        $script = \implode("\n", \array_filter(\array_map('trim', \explode("\n", $m[1])), static fn ($l) => $l !== '' && $l[0] !== '#'));
        self::assertSame('systemctl kill --kill-whom=main --signal=SIGUSR2 weft.service 2>/dev/null || true', $script);
        self::assertFileExists(self::DEPLOY . '/weft.service');
        self::assertStringContainsString('--log-file /var/log/weft/', $conf);
    }

    public function testTheExampleConfigurationIsValid(): void
    {
        [$code, $out] = ServerProcess::cli(['config', '--config', self::DEPLOY . '/weft.php', '--json']);
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
