<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\ServerProcess;

/**
 * The master's signals follow nginx's and php-fpm's convention: USR1 reopens the logs, HUP and USR2
 * reload. A logrotate rule written for them (postrotate: kill -USR1) must never reload Weft.
 */
final class SignalsTest extends TestCase
{
    private string $dir;

    protected function setUp(): void
    {
        $this->dir = \sys_get_temp_dir() . '/weft-signals-' . \bin2hex(\random_bytes(4));
        \mkdir($this->dir, 0700);
    }

    protected function tearDown(): void
    {
        \exec('rm -rf ' . \escapeshellarg($this->dir));
    }

    /** @return iterable<string, array{string}> */
    public static function modes(): iterable
    {
        yield 'coroutine' => ['coroutine'];
        yield 'sync' => ['sync'];
    }

    #[DataProvider('modes')]
    public function testUsr1ReopensTheLogsAndDoesNotReload(string $mode): void
    {
        $log = "$this->dir/weft.log";
        $app = $this->app('v1');
        $server = new ServerProcess([$app, '--mode', $mode, '--workers', '2', '--log-file', $log]);
        try {
            $workers = ServerProcess::waitFor(fn () => \count($p = $server->workerPids()) === 2 ? $p : null, 15, 'two workers');
            $this->app('v2');   // a reload would now serve v2

            \rename($log, "$log.1");   // what logrotate does before postrotate
            \posix_kill($server->masterPid(), \SIGUSR1);
            $text = ServerProcess::waitFor(function () use ($log, $workers) {
                $text = (string) @\file_get_contents($log);
                foreach ($workers as $pid) {
                    if (!\str_contains($text, "[worker $pid] info: Log file reopened (SIGUSR1)")) {
                        return null;
                    }
                }
                return \str_contains($text, 'Log file reopened (SIGUSR1), 2 worker(s) told') ? $text : null;
            }, 10, 'the master and both workers in the new file');

            self::assertStringContainsString("[master {$server->masterPid()}] info: Log file reopened", $text);
            self::assertStringNotContainsString('Reload', $text . \file_get_contents("$log.1"));
            self::assertSame($workers, $server->workerPids(), 'the same workers serve');
            self::assertSame('v1', \file_get_contents("http://{$server->address()}/"), 'the code was not reloaded');
        } finally {
            $server->stop();
        }
    }

    public function testHupAndUsr2EachDoARollingReload(): void
    {
        $app = $this->app('v1');
        $server = new ServerProcess([$app, '--workers', '2']);
        try {
            $before = ServerProcess::waitFor(fn () => \count($p = $server->workerPids()) === 2 ? $p : null, 15, 'two workers');
            foreach ([\SIGHUP => 'v2', \SIGUSR2 => 'v3'] as $signal => $version) {
                $this->app($version);
                \posix_kill($server->masterPid(), $signal);
                $after = ServerProcess::waitFor(function () use ($server, $before) {
                    $pids = $server->workerPids();
                    return \count($pids) === 2 && \array_intersect($before, $pids) === [] ? $pids : null;
                }, 20, "a new generation after signal $signal");
                self::assertSame($version, \file_get_contents("http://{$server->address()}/"), "signal $signal loads the code afresh");
                $before = $after;
            }
            self::assertSame(2, \substr_count($server->output(), 'Reload: starting 2 new worker(s)'), $server->output());
            self::assertStringNotContainsString('reopened', $server->output());
            [$code, $out] = $server->control('reload');   // bin/weft reload still works
            self::assertSame(0, $code, $out);
            self::assertStringContainsString('reloaded: 2 new worker(s) serving', $out);
        } finally {
            $server->stop();
        }
    }

    public function testFpmModeReloadsOnHupAndUsr2(): void
    {
        foreach (['/usr/sbin/nginx', '/usr/sbin/php-fpm8.2'] as $binary) {
            if (!\is_executable($binary)) {
                self::markTestSkipped("$binary is not installed");
            }
        }
        $server = new ServerProcess([$this->app('v1'), '--mode', 'fpm', '--workers', '1']);
        try {
            $seen = 0;
            foreach ([\SIGHUP => 'v2', \SIGUSR2 => 'v3'] as $signal => $version) {
                $this->app($version);
                \posix_kill($server->masterPid(), $signal);
                $seen++;
                ServerProcess::waitFor(fn () => \substr_count($server->output(), 'Reload: php-fpm replaces its workers') === $seen, 10, "the reload after signal $signal");
                ServerProcess::waitFor(fn () => @\file_get_contents("http://{$server->address()}/") === $version, 10, "$version served");
            }
            self::assertStringNotContainsString('reopened', $server->output());
        } finally {
            $server->stop();
        }
    }

    private function app(string $body): string
    {
        $app = "$this->dir/app.php";
        \file_put_contents($app, "<?php return static fn () => new Weft\\Http\\Message\\Response(200, [], '$body');\n");
        \clearstatcache();
        return $app;
    }
}
