<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Server;

use PHPUnit\Framework\TestCase;
use Weft\Cli\PhpRuntime;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\ServerProcess;

/**
 * What an operator relies on, against real `bin/weft` processes: reload loads what is on disk, a daemon
 * keeps the app's output, start and reload report failure, and the runtime files cannot be turned
 * against the operator.
 */
final class OperatorTest extends TestCase
{
    private const APP = __DIR__ . '/../fixtures/hardening.php';

    private string $dir;
    /** @var list<int> processes to kill at the end */
    private array $spawned = [];

    protected function setUp(): void
    {
        $this->dir = \sys_get_temp_dir() . '/weft-operator-' . \bin2hex(\random_bytes(4));
        \mkdir($this->dir, 0700);
    }

    protected function tearDown(): void
    {
        foreach ($this->spawned as $pid) {
            @\posix_kill($pid, \SIGKILL);
        }
        \exec('rm -rf ' . \escapeshellarg($this->dir));
    }

    public function testReloadLoadsTheEditedAppAndTheClassesItAutoloadsWithOpcacheOn(): void
    {
        $this->writeVersionedApp('one');
        $server = new ServerProcess([$this->dir . '/app.php', '--workers', '2'], asTyped: true);
        self::assertSame('app one, class one', RawHttp::get($server->address())['body']);
        self::assertTrue($server->status()['workers'][0]['opcache'], 'the default runs with opcache on');

        $this->writeVersionedApp('two');
        [$code, $out] = $server->control('reload');
        self::assertSame(0, $code, $out);
        self::assertStringContainsString('reloaded', $out);
        self::waitForOnlyNewWorkers($server, 2);
        for ($i = 0; $i < 4; $i++) {
            self::assertSame('app two, class two', RawHttp::get($server->address())['body']);
        }

        // And again: not only the first reload.
        $this->writeVersionedApp('three');
        [$code, $out] = $server->control('reload');
        self::assertSame(0, $code, $out);
        self::waitForOnlyNewWorkers($server, 2);
        self::assertSame('app three, class three', RawHttp::get($server->address())['body']);
        $server->stop();
    }

    public function testTheDefaultGivesTheJitATraceBudgetForAPoolOfInstances(): void
    {
        // PHP's default (1,024 root traces) was used up by the boot code of a pool of Laravel instances
        // before the request path got a trace: the workers run with PhpRuntime::JIT_BUDGETS.
        \file_put_contents($this->dir . '/app.php', <<<'PHP'
            <?php
            use Weft\Http\Message\Request;
            use Weft\Http\Message\Response;

            return static fn (Request $request): Response => new Response(200, [], \json_encode([
                'jit' => ini_get('opcache.jit'),
                'root_traces' => (int) ini_get('opcache.jit_max_root_traces'),
                'side_traces' => (int) ini_get('opcache.jit_max_side_traces'),
                'exit_counters' => (int) ini_get('opcache.jit_max_exit_counters'),
            ]));
            PHP);
        $server = new ServerProcess([$this->dir . '/app.php', '--workers', '1'], asTyped: true);
        $ini = \json_decode(RawHttp::get($server->address())['body'], true);
        self::assertSame([
            'jit' => 'tracing',
            'root_traces' => PhpRuntime::JIT_ROOT_TRACES,
            'side_traces' => PhpRuntime::JIT_SIDE_TRACES,
            'exit_counters' => PhpRuntime::JIT_EXIT_COUNTERS,
        ], $ini);
        $server->stop();
    }

    public function testReloadWithASyntaxErrorFailsWithTheReasonAndTheOldWorkersKeepServing(): void
    {
        $this->writeVersionedApp('one');
        $server = new ServerProcess([$this->dir . '/app.php', '--workers', '1']);
        $pid = (int) RawHttp::get($server->address(), '/pid')['body'] ?: $server->workerPids()[0];

        \file_put_contents($this->dir . '/app.php', "<?php\nreturn static fn ( => ;\n");
        \touch($this->dir . '/app.php', \time() + 1);
        [$code, $out] = $server->control('reload');
        self::assertSame(1, $code, $out);
        self::assertStringContainsString('reload failed', $out);
        self::assertStringContainsString('syntax error', $out);
        self::assertStringContainsString('old workers keep serving', $out);
        self::assertSame('app one, class one', RawHttp::get($server->address())['body']);
        self::assertSame([$pid], $server->workerPids());
        $server->stop();
    }

    public function testAnAppThatNeverFinishesLoadingFailsTheReloadAndTheStartWithTheReason(): void
    {
        // Boot hangs while the flag file exists (a database connect without a timeout, say).
        $app = $this->dir . '/hang.php';
        $flag = $this->dir . '/hang.flag';
        \file_put_contents($app, "<?php\nif (is_file(__DIR__ . '/hang.flag')) { \\sleep(1000); }\n"
            . "return static fn (Weft\\Http\\Message\\Request \$r): Weft\\Http\\Message\\Response => new Weft\\Http\\Message\\Response(200, [], 'up');\n");
        $server = new ServerProcess([$app, '--workers', '1', '--worker-timeout', '2']);
        $workers = $server->workerPids();
        \touch($flag);
        [$code, $out] = $server->control('reload');
        self::assertSame(1, $code, $out);
        self::assertStringContainsString('reload failed', $out);
        self::assertStringContainsString('did not finish loading the application within 2 s (--worker-timeout)', $out);
        self::assertSame('up', RawHttp::get($server->address())['body']);
        self::assertSame($workers, $server->workerPids(), 'the old worker serves on, and the hung one is gone');
        // Once the cause is gone, the next reload works: nothing was left wedged.
        \unlink($flag);
        [$code, $out] = $server->control('reload');
        self::assertSame(0, $code, $out);
        $server->stop();

        // A daemon whose first workers never finish loading: exit 1 with the reason, nothing left behind.
        \touch($flag);
        $pidFile = $this->dir . '/hang.pid';
        [$code, $out] = ServerProcess::cli(['serve', $app, '--daemon', '--port', '0', '--workers', '1', '--worker-timeout', '2', '--pid-file', $pidFile, '--log-file', $this->dir . '/hang.log']);
        self::assertSame(1, $code, $out);
        self::assertStringContainsString('did not finish loading the application within 2 s', $out);
        ServerProcess::waitFor(fn () => !\file_exists($pidFile) ?: null, 15, 'the master to exit');
    }

    public function testDaemonSendsTheAppsOutputToTheLogAndNeverLosesAWorkerToIt(): void
    {
        $log = $this->dir . '/weft.log';
        $pidFile = $this->dir . '/weft.pid';
        [$code, $out] = ServerProcess::cli(['serve', self::APP, '--daemon', '--port', '0', '--workers', '1', '--pid-file', $pidFile, '--log-file', $log]);
        self::assertSame(0, $code, $out);
        self::assertMatchesRegularExpression('/started in the background on 127\.0\.0\.1:(\d+)/', $out);
        \preg_match('/127\.0\.0\.1:(\d+)/', $out, $m);
        $address = '127.0.0.1:' . $m[1];
        try {
            $worker = RawHttp::get($address, '/pid')['body'];
            for ($i = 0; $i < 3; $i++) {
                $response = RawHttp::get($address, '/noisy');
                self::assertSame(200, $response['status']);
                self::assertSame('still fine', $response['body']);
            }
            self::assertSame($worker, RawHttp::get($address, '/pid')['body'], 'the same worker serves on');
            $text = ServerProcess::waitFor(function () use ($log) {
                $text = (string) \file_get_contents($log);
                return \str_contains($text, 'warned-by-the-handler') && \str_contains($text, 'error-logged-by-the-handler')
                    && \str_contains($text, 'written-to-STDERR-by-the-handler') ? $text : null;
            }, 10, 'the output in the log');
            self::assertStringContainsString('echoed-by-the-handler', $text);
            self::assertStringContainsString('dumped-by-the-handler', $text);
            self::assertStringContainsString('written-to-STDOUT-by-the-handler', $text);
            self::assertStringContainsString('written-to-STDERR-by-the-handler', $text);
            self::assertStringNotContainsString('not a valid stream resource', $text);
            self::assertStringNotContainsString('exited with code', $text);
            self::assertSame(0640, \fileperms($log) & 0777, 'the log holds request targets: not world-readable');
            self::assertSame(0600, \fileperms($pidFile) & 0777);
            self::assertSame(0600, \fileperms($pidFile . '.sock') & 0777);
        } finally {
            [$code, $out] = ServerProcess::cli(['stop', '--pid-file', $pidFile]);
        }
        self::assertSame(0, $code, $out);
    }

    public function testDaemonWithAnAppThatCannotBootExitsNonZeroWithTheReason(): void
    {
        $app = $this->dir . '/broken.php';
        \file_put_contents($app, "<?php\nthrow new RuntimeException('the database is not configured');\n");
        $pidFile = $this->dir . '/weft.pid';
        $started = \microtime(true);
        [$code, $out] = ServerProcess::cli(['serve', $app, '--daemon', '--port', '0', '--workers', '2', '--pid-file', $pidFile, '--log-file', $this->dir . '/weft.log']);
        self::assertSame(1, $code, $out);
        self::assertStringContainsString('could not start', $out);
        self::assertStringContainsString('the database is not configured', $out);
        self::assertLessThan(30, \microtime(true) - $started);
        // Nothing lingers: the master stopped itself.
        ServerProcess::waitFor(fn () => !\file_exists($pidFile), 15, 'the master to exit');
    }

    public function testServersOnPortZeroEachGetRuntimeFilesNamedAfterThePortTheyGot(): void
    {
        // Without --pid-file, in a runtime directory of the test's own.
        $previous = \getenv('XDG_RUNTIME_DIR');
        \putenv('XDG_RUNTIME_DIR=' . $this->dir);
        try {
            $ports = [];
            foreach ([1, 2] as $ignored) {
                [$code, $out] = ServerProcess::cli(['serve', self::APP, '--daemon', '--port', '0', '--workers', '1']);
                self::assertSame(0, $code, $out);
                self::assertSame(1, \preg_match('/127\.0\.0\.1:(\d+), master pid (\d+)/', $out, $m), $out);
                $this->spawned[] = (int) $m[2];
                $ports[] = $port = (int) $m[1];
                self::assertNotSame(0, $port);
                self::assertFileExists("{$this->dir}/weft-$port.pid");
                self::assertFileExists("{$this->dir}/weft-$port.log");
            }
            self::assertFileDoesNotExist("{$this->dir}/weft-0.pid");
            self::assertNotSame($ports[0], $ports[1]);
            foreach ($ports as $port) {
                self::assertSame('ok', RawHttp::get("127.0.0.1:$port")['body']);
                [$code, $out] = ServerProcess::cli(['stop', '--port', (string) $port]);
                self::assertSame(0, $code, $out);
                self::assertFileDoesNotExist("{$this->dir}/weft-$port.pid");
            }
        } finally {
            \putenv($previous === false ? 'XDG_RUNTIME_DIR' : "XDG_RUNTIME_DIR=$previous");
        }
    }

    public function testAPlantedSymlinkIsNeverFollowed(): void
    {
        $victim = $this->dir . '/victim';
        \file_put_contents($victim, "precious\n");
        \symlink($victim, $this->dir . '/weft.pid');
        [$code, $out] = ServerProcess::cli(['serve', self::APP, '--port', '0', '--pid-file', $this->dir . '/weft.pid'], 30);
        self::assertSame(1, $code, $out);
        self::assertStringContainsString('symbolic link', $out);
        self::assertSame("precious\n", \file_get_contents($victim));

        \symlink($victim, $this->dir . '/weft.log');
        [$code, $out] = ServerProcess::cli(['serve', self::APP, '--daemon', '--port', '0', '--pid-file', $this->dir . '/other.pid', '--log-file', $this->dir . '/weft.log'], 30);
        self::assertSame(1, $code, $out);
        self::assertStringContainsString('symbolic link', $out);
        self::assertSame("precious\n", \file_get_contents($victim));

        [$code, $out] = ServerProcess::cli(['stop', '--pid-file', $this->dir . '/weft.pid']);
        self::assertSame(1, $code, $out);
        self::assertStringContainsString('symbolic link', $out);
    }

    public function testAPidFilePathAnotherUserControlsIsRefused(): void
    {
        $open = $this->dir . '/open';
        \mkdir($open);
        \chmod($open, 0777); // writable by anyone, without the sticky bit /tmp has
        [$code, $out] = ServerProcess::cli(['serve', self::APP, '--port', '0', '--pid-file', $open . '/weft.pid'], 30);
        self::assertSame(1, $code, $out);
        self::assertStringContainsString('writable by other users', $out);
        self::assertFileDoesNotExist($open . '/weft.pid');

        $nobody = \posix_getpwnam('nobody');
        if (\posix_geteuid() !== 0 || $nobody === false) {
            return; // handing a directory to another user needs root
        }
        $theirs = $this->dir . '/theirs';
        \mkdir($theirs, 0755);
        \chown($theirs, $nobody['uid']);
        [$code, $out] = ServerProcess::cli(['serve', self::APP, '--port', '0', '--pid-file', $theirs . '/weft.pid'], 30);
        self::assertSame(1, $code, $out);
        self::assertStringContainsString('belongs to another user', $out);
        \file_put_contents($theirs . '/weft.pid', "1\n");
        \chown($theirs . '/weft.pid', $nobody['uid']);
        [$code, $out] = ServerProcess::cli(['stop', '--pid-file', $theirs . '/weft.pid']);
        self::assertSame(1, $code, $out);
        self::assertStringContainsString('belongs to another user', $out);
    }

    public function testAPidFileNamingTheMasterOfAnotherPidFileIsNeverSignalled(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1'], pidFile: $this->dir . '/a.pid');
        // Another port's pid file, holding this master's pid (copied, planted, or left from before).
        $other = $this->dir . '/b.pid';
        \file_put_contents($other, $server->masterPid() . "\n");
        foreach (['stop', 'reload'] as $command) {
            [$code, $out] = ServerProcess::cli([$command, '--pid-file', $other]);
            self::assertSame(1, $code, $out);
            self::assertStringContainsString('Weft master of another pid file', $out);
            self::assertStringContainsString('nothing was signalled', $out);
        }
        self::assertSame(200, RawHttp::get($server->address())['status']);
        self::assertTrue($server->isRunning());
        // Its own pid file still works, even with the control socket's file gone (told by /proc).
        \rename($this->dir . '/a.pid.sock', $this->dir . '/moved.sock');
        [$code, $out] = $server->control('stop');
        self::assertSame(0, $code, $out);
        ServerProcess::waitFor(fn () => !$server->isRunning() ?: null, 15, 'the master to stop');
    }

    public function testAPidFileNamingAnotherProcessIsReportedAndNeverSignalled(): void
    {
        $sleeper = \proc_open(['sleep', '60'], [], $pipes);
        $pid = \proc_get_status($sleeper)['pid'];
        $this->spawned[] = $pid;
        $pidFile = $this->dir . '/weft.pid';
        foreach ([$pid, 1] as $foreign) {
            \file_put_contents($pidFile, "$foreign\n");
            foreach (['stop', 'reload'] as $command) {
                [$code, $out] = ServerProcess::cli([$command, '--pid-file', $pidFile]);
                self::assertSame(1, $code, $out);
                self::assertStringContainsString("names pid $foreign", $out);
                self::assertStringContainsString('not a Weft master', $out);
                self::assertStringContainsString('nothing was signalled', $out);
            }
        }
        self::assertTrue(\proc_get_status($sleeper)['running'], 'the unrelated process lives');
        \proc_terminate($sleeper, \SIGKILL);
        \proc_close($sleeper);

        // A stale pid file holding 1 is no reason not to start: it is said and replaced.
        \file_put_contents($pidFile, "1\n");
        $server = new ServerProcess([self::APP, '--workers', '1'], pidFile: $pidFile);
        self::assertStringContainsString('ignoring the stale pid file', $server->output());
        self::assertSame($server->masterPid(), $server->status()['master']['pid']);
        self::assertSame(200, RawHttp::get($server->address())['status']);

        // And a live master is recognised: a second serve on the same pid file refuses to start.
        [$code, $out] = ServerProcess::cli(['serve', self::APP, '--port', '0', '--pid-file', $pidFile], 30);
        self::assertSame(1, $code, $out);
        self::assertStringContainsString('already running with master pid ' . $server->masterPid(), $out);
        $server->stop();
        self::assertFalse($server->isRunning());
    }

    /** The old generation drains on SIGTERM: until it is gone, one of its workers may still answer. */
    private static function waitForOnlyNewWorkers(ServerProcess $server, int $count): void
    {
        ServerProcess::waitFor(function () use ($server, $count) {
            $workers = $server->status()['workers'];
            return \count($workers) === $count && \array_filter($workers, static fn ($w) => $w['state'] !== 'ready') === [];
        }, 20, 'only the new workers');
    }

    private function writeVersionedApp(string $version): void
    {
        \file_put_contents($this->dir . '/Versioned.php', <<<PHP
            <?php
            final class Versioned
            {
                public static function name(): string
                {
                    return 'class $version';
                }
            }
            PHP);
        \file_put_contents($this->dir . '/app.php', <<<PHP
            <?php
            use Weft\\Http\\Message\\Request;
            use Weft\\Http\\Message\\Response;

            spl_autoload_register(static function (string \$class): void {
                if (\$class === 'Versioned') {
                    require __DIR__ . '/Versioned.php';
                }
            });

            return static fn (Request \$request): Response => new Response(200, [], 'app $version, ' . Versioned::name());
            PHP);
        // A deploy writes files with a new modification time; the test does not wait a second for it.
        static $tick = 0;
        $when = \time() - 100 + ++$tick;
        \touch($this->dir . '/Versioned.php', $when);
        \touch($this->dir . '/app.php', $when);
    }
}
