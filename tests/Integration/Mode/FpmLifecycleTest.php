<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Mode;

use PHPUnit\Framework\Attributes\DataProvider;

/** Starting, supervising and stopping nginx and php-fpm: each test runs its own server. */
final class FpmLifecycleTest extends FpmTestCase
{
    private string $dir = '';

    protected function setUp(): void
    {
        self::requireFpm();
        $this->dir = self::scratch();
    }

    protected function tearDown(): void
    {
        // A daemon is nobody's child here: stop it by its pid file whatever the test did.
        $pid = (int) @\file_get_contents($this->dir . '/weft.pid');
        if ($pid > 0 && @\posix_kill($pid, 0)) {
            ServerProcess::run(['stop', '--pid-file', $this->dir . '/weft.pid']);
        }
        self::removeTree($this->dir);
    }

    /** @param list<string> $extra */
    private function serve(array $extra = []): ServerProcess
    {
        return ServerProcess::start([
            'serve', self::FIXTURES . '/fpm-app.php', '--mode', 'fpm', '--port', '0', '--workers', '2',
            '--pid-file', $this->dir . '/weft.pid', ...$extra,
        ]);
    }

    /** @return iterable<string, array{string}> */
    public static function stops(): iterable
    {
        yield 'bin/weft stop' => ['command'];
        yield 'SIGINT (Ctrl-C)' => ['sigint'];
        yield 'SIGTERM' => ['sigterm'];
    }

    #[DataProvider('stops')]
    public function testStopLeavesNothingBehind(string $how): void
    {
        $server = $this->serve();
        $pidFile = $this->dir . '/weft.pid';
        self::assertSame(200, HttpConnection::get($server->port, '/')->status);
        $status = self::serverStatus($pidFile);
        $runtime = $status['master']['runtime'];
        self::assertDirectoryExists($runtime);
        self::assertFileExists($pidFile . '.sock');
        $groups = self::processGroups($status);
        self::assertCount(2, $groups);

        match ($how) {
            'command' => self::assertSame(0, ServerProcess::run(['stop', '--pid-file', $pidFile])[0]),
            'sigint' => $server->signal(\SIGINT),
            'sigterm' => $server->signal(\SIGTERM),
        };
        self::assertSame(0, $server->wait(60.0), $server->stderr());
        self::assertNothingLeft($groups, $runtime);
        \clearstatcache();
        self::assertFileDoesNotExist($pidFile);
        self::assertFileDoesNotExist($pidFile . '.sock');
        self::assertStringContainsString('nginx (pid ' . $status['master']['nginx']['pid'] . ') exited with code 0', $server->stderr());
        self::assertStringContainsString('php-fpm (pid ' . $status['master']['php_fpm']['pid'] . ') exited with code 0', $server->stderr());
    }

    public function testStopWaitsForARequestInFlight(): void
    {
        $server = $this->serve();
        $connection = new HttpConnection($server->port);
        // Keep-alive: the connection is open and idle when the stop begins; the next request on it
        // may be refused, but one that nginx has accepted must be answered.
        self::assertSame(200, $connection->request('GET', '/')->status);
        $connection->close();
        [$code] = ServerProcess::run(['stop', '--pid-file', $this->dir . '/weft.pid']);
        self::assertSame(0, $code);
        self::assertSame(0, $server->wait(30.0));
    }

    public function testCrashedNginxAndPhpFpmAreRestarted(): void
    {
        $server = $this->serve();
        $pidFile = $this->dir . '/weft.pid';
        foreach (['nginx', 'php_fpm'] as $i => $program) {
            $before = self::serverStatus($pidFile)['master'];
            $old = $before[$program]['pid'];
            \posix_kill($old, \SIGKILL);
            $after = self::eventually(static function () use ($pidFile, $program, $old): ?array {
                $master = self::serverStatus($pidFile)['master'];
                return ($master[$program]['pid'] ?? null) !== null && $master[$program]['pid'] !== $old ? $master : null;
            }, 60.0, "$program restarted");
            self::assertSame($i + 1, $after['restarts']);
            self::eventually(static function () use ($server): bool {
                try {
                    return HttpConnection::get($server->port, '/')->status === 200;
                } catch (\RuntimeException) {
                    return false;
                }
            }, 60.0, "requests answered after $program was restarted");
            // The killed master's workers went with it.
            self::assertSame([], \Weft\Mode\Fpm\ProcessTable::snapshot()->group($old));
        }
        $status = self::serverStatus($pidFile);
        self::assertMatchesRegularExpression('/warning: nginx \(pid \d+\) killed by signal 9 after [\d.]+ s; restarting it in/', $server->stderr());
        self::assertMatchesRegularExpression('/warning: php-fpm \(pid \d+\) killed by signal 9/', $server->stderr());
        $server->kill();
        self::assertNothingLeft(self::processGroups($status), $status['master']['runtime']);
    }

    public function testWeftKilledOutrightTakesNginxAndPhpFpmWithIt(): void
    {
        $server = $this->serve();
        $status = self::serverStatus($this->dir . '/weft.pid');
        $server->signal(\SIGKILL);
        self::assertSame(128 + \SIGKILL, $server->wait(10.0));
        $groups = self::processGroups($status);
        // The parent-death signal: nothing to clean up the runtime folder, but no process stays.
        self::eventually(static function () use ($groups): bool {
            $table = \Weft\Mode\Fpm\ProcessTable::snapshot();
            foreach ($groups as $group) {
                if ($table->group($group) !== []) {
                    return false;
                }
            }
            return true;
        }, 30.0, 'nginx and php-fpm gone');

        // The next start on the same pid file clears the stale runtime folder.
        $again = $this->serve();
        self::assertSame(200, HttpConnection::get($again->port, '/')->status);
        $again->kill();
    }

    public function testPortInUse(): void
    {
        $busy = \stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) \substr((string) \stream_socket_get_name($busy, false), 10);
        [$code, $out, $err] = ServerProcess::run([
            'serve', self::FIXTURES . '/fpm-app.php', '--mode', 'fpm', '--port', (string) $port, '--pid-file', $this->dir . '/weft.pid',
        ]);
        \fclose($busy);
        self::assertSame(1, $code);
        self::assertSame('', $out);
        self::assertSame(1, \substr_count($err, "\n"), $err);
        self::assertStringContainsString("port $port", $err);
        self::assertStringContainsString('Address already in use', $err);
        self::assertDirectoryDoesNotExist($this->dir . '/weft.pid.fpm');
    }

    /** @return iterable<string, array{string, list<string>}> */
    public static function brokenApps(): iterable
    {
        yield 'syntax error' => ["<?php\nreturn static fn (\$r) => strlen(\n", ['Cannot load the application', "Unclosed '('", 'at APP:3']];
        yield 'exit() at load' => ["<?php\nexit(0);\n", ['expects "pong", but got status 200 with 0 byte(s)', 'exit() or die()']];
    }

    /** @param list<string> $expected */
    #[DataProvider('brokenApps')]
    public function testAnAppThatCannotLoadSaysSoWhileStarting(string $code, array $expected): void
    {
        // The workers' log records reach the supervisor through a FIFO it used to read only once
        // running, and an empty answer to the readiness request went unremarked: an app that cannot
        // load was silent for the whole start timeout.
        $app = $this->dir . '/broken.php';
        \file_put_contents($app, $code);
        $stderr = $this->dir . '/stderr';
        $process = \proc_open(
            [\PHP_BINARY, ServerProcess::BIN, 'serve', $app, '--mode', 'fpm', '--port', '0', '--workers', '1', '--pid-file', $this->dir . '/weft.pid'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', $stderr, 'w']],
            $pipes,
        );
        self::assertIsResource($process);
        try {
            $log = self::eventually(static fn () => \str_contains((string) @\file_get_contents($stderr), $expected[0]) ? \file_get_contents($stderr) : null, 30.0, 'the load error in the log');
            foreach ($expected as $text) {
                self::assertStringContainsString(\str_replace('APP', $app, $text), $log);
            }
            self::assertTrue(\proc_get_status($process)['running'], 'still starting: php-fpm keeps trying');
        } finally {
            \proc_terminate($process, \SIGTERM);
            self::eventually(static fn () => !\proc_get_status($process)['running'], 30.0, 'the stop');
            \proc_close($process);
        }
        self::assertDirectoryDoesNotExist($this->dir . '/weft.pid.fpm');
    }

    /** @return iterable<string, array{string, string}> */
    public static function binaries(): iterable
    {
        yield 'nginx' => ['WEFT_NGINX', 'apt-get install nginx'];
        yield 'php-fpm' => ['WEFT_PHP_FPM', 'apt-get install php' . \PHP_MAJOR_VERSION . '.' . \PHP_MINOR_VERSION . '-fpm'];
    }

    #[DataProvider('binaries')]
    public function testAMissingBinaryNamesItsPackage(string $variable, string $install): void
    {
        [$code, $out, $err] = ServerProcess::run(
            ['serve', self::FIXTURES . '/fpm-app.php', '--mode', 'fpm', '--port', '0', '--pid-file', $this->dir . '/weft.pid'],
            [$variable => '/nonexistent/bin/program'],
        );
        self::assertSame(1, $code);
        self::assertSame('', $out);
        self::assertSame(1, \substr_count($err, "\n"), $err);
        self::assertStringContainsString($install, $err);
    }

    public function testDaemon(): void
    {
        $pidFile = $this->dir . '/weft.pid';
        $log = $this->dir . '/weft.log';
        $port = (int) \substr((string) \stream_socket_get_name($probe = \stream_socket_server('tcp://127.0.0.1:0'), false), 10);
        \fclose($probe);
        [$code, $out, $err] = ServerProcess::run([
            'serve', self::FIXTURES . '/fpm-app.php', '--mode', 'fpm', '--port', (string) $port, '--workers', '1',
            '--pid-file', $pidFile, '--log-file', $log, '--daemon',
        ]);
        self::assertSame(0, $code, $err . @\file_get_contents($log));
        self::assertStringContainsString('Weft started in the background', $out);
        $status = self::serverStatus($pidFile);
        try {
            self::assertSame('fpm', $status['master']['mode']);
            self::assertSame(200, HttpConnection::get($port, '/')->status);
        } finally {
            [$stopped] = ServerProcess::run(['stop', '--pid-file', $pidFile]);
        }
        self::assertSame(0, $stopped);
        self::assertNothingLeft(self::processGroups($status), $status['master']['runtime']);
        self::assertStringContainsString('fpm mode ready on 127.0.0.1:' . $port, (string) \file_get_contents($log));
    }

    public function testOpcacheOff(): void
    {
        $server = $this->serve(['--opcache', 'off']);
        self::assertSame(200, HttpConnection::get($server->port, '/')->status);
        self::assertSame('off', self::serverStatus($this->dir . '/weft.pid')['master']['opcache']);
        self::assertSame(['enabled' => false], \json_decode(HttpConnection::get($server->port, '/opcache')->body, true));

        $on = ServerProcess::start([
            'serve', self::FIXTURES . '/fpm-app.php', '--mode', 'fpm', '--port', '0', '--workers', '1', '--pid-file', $this->dir . '/on.pid',
        ]);
        self::assertSame(['enabled' => true], \json_decode(HttpConnection::get($on->port, '/opcache')->body, true));
    }
}
