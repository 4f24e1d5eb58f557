<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Server;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\ServerProcess;

/** Master and workers as a user runs them: respawn, recycling, graceful stop, reload, status. */
final class ProcessModelTest extends TestCase
{
    private const APP = __DIR__ . '/../fixtures/app.php';

    public function testKilledWorkerIsReplacedAndOthersKeepServing(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '2']);
        $before = ServerProcess::waitFor(fn () => \count($pids = $server->workerPids()) === 2 ? $pids : null, 15, 'two workers');
        \posix_kill($before[0], \SIGKILL);
        $after = ServerProcess::waitFor(function () use ($server, $before) {
            $pids = $server->workerPids();
            return \count($pids) === 2 && !\in_array($before[0], $pids, true) ? $pids : null;
        }, 15, 'a replacement worker');
        self::assertContains($before[1], $after, 'the other worker was untouched');
        for ($i = 0; $i < 10; $i++) {
            self::assertSame(200, RawHttp::get($server->address())['status']);
        }
        self::assertStringContainsString('killed by signal 9', $server->output());
        self::assertSame(1, $server->status()['master']['restarts']);
        $server->stop();
    }

    public function testWorkerThatExitsMidRequestIsReplaced(): void
    {
        // Without the exit hook (with it, exit() ends only the request: Integration\Hook\ServeHooksTest).
        $server = new ServerProcess([self::APP, '--workers', '1', '--hooks', 'none']);
        $pid = (int) RawHttp::get($server->address(), '/pid')['body'];
        try {
            RawHttp::get($server->address(), '/exit');
        } catch (\RuntimeException) {
            // The connection dies with the worker: that request is lost, as it must be.
        }
        $newPid = ServerProcess::waitFor(function () use ($server, $pid) {
            try {
                $now = (int) RawHttp::get($server->address(), '/pid')['body'];
            } catch (\RuntimeException) {
                return null;
            }
            return $now !== $pid ? $now : null;
        }, 15, 'a new worker');
        self::assertNotSame($pid, $newPid);
        self::assertStringContainsString('exited with code 7', $server->output());
        $server->stop();
    }

    public function testBrokenApplicationIsRestartedWithBackOffNotInALoop(): void
    {
        $start = \microtime(true);
        [$stdout, $log] = self::serveFor(2.5, "<?php\nthrow new RuntimeException('cannot boot');\n");
        // READY means every worker serves: never while the only worker waits out its back-off.
        self::assertStringNotContainsString('READY', $stdout);
        $boots = \substr_count($log, 'could not load the application: cannot boot');
        // Back-off 0.1, 0.2, 0.4, 0.8 s...: a handful of attempts in 2.5 s, not hundreds.
        self::assertGreaterThanOrEqual(2, $boots, $log);
        self::assertLessThanOrEqual(8, $boots, $log);
        self::assertStringContainsString('restarting in', $log);
        self::assertLessThan(30, \microtime(true) - $start);
    }

    public function testAnApplicationThatExitsWhileLoadingIsRestartedWithBackOffToo(): void
    {
        // exit(0) in the app file: the worker ends "cleanly" before it ever served. That is a failed
        // start, not a recycled worker: it must wait out the back-off like a crash, not respawn at once.
        [$stdout, $log] = self::serveFor(2.5, "<?php\nexit(0);\n");
        self::assertStringNotContainsString('READY', $stdout);
        $exits = \substr_count($log, 'exited with code 0');
        self::assertGreaterThanOrEqual(2, $exits, $log);
        self::assertLessThanOrEqual(8, $exits, $log);
        self::assertStringContainsString('restarting in 0.2 s', $log);
    }

    /**
     * Serves an application made of $code in the foreground (one worker) for $seconds, then stops it.
     *
     * @return array{string, string} its stdout and its log (stderr)
     */
    private static function serveFor(float $seconds, string $code): array
    {
        $app = \sys_get_temp_dir() . '/weft-boot-' . \getmypid() . '.php';
        \file_put_contents($app, $code);
        $pidFile = \sys_get_temp_dir() . '/weft-boot-' . \getmypid() . '.pid';
        $process = \proc_open(
            [\PHP_BINARY, \dirname(__DIR__, 3) . '/bin/weft', 'serve', $app, '--port', '0', '--workers', '1', '--pid-file', $pidFile],
            [1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
            $pipes,
        );
        \usleep((int) ($seconds * 1e6));
        \proc_terminate($process, \SIGTERM);
        $log = (string) \stream_get_contents($pipes[2]);
        $stdout = (string) \stream_get_contents($pipes[1]);
        \proc_close($process);
        @\unlink($app);
        return [$stdout, $log];
    }

    public function testAnApplicationThatExitsWhileLoadingFailsADaemonStart(): void
    {
        $app = \sys_get_temp_dir() . '/weft-exits-d-' . \getmypid() . '.php';
        \file_put_contents($app, "<?php\nexit(0);\n");
        $pidFile = \sys_get_temp_dir() . '/weft-exits-d-' . \getmypid() . '.pid';
        $logFile = \sys_get_temp_dir() . '/weft-exits-d-' . \getmypid() . '.log';
        @\unlink($logFile);
        $process = \proc_open(
            [\PHP_BINARY, \dirname(__DIR__, 3) . '/bin/weft', 'serve', $app, '--port', '0', '--workers', '1', '--daemon', '--pid-file', $pidFile, '--log-file', $logFile],
            [1 => ['pipe', 'w'], 2 => ['pipe', 'w']],
            $pipes,
        );
        $stdout = \stream_get_contents($pipes[1]);
        $stderr = \stream_get_contents($pipes[2]);
        $code = \proc_close($process);
        @\unlink($app);
        @\unlink($logFile);
        self::assertSame(1, $code, $stdout . $stderr);
        self::assertStringContainsString('exited with code 0 before it was ready', $stdout . $stderr);
        // The launcher reports the failure while the daemonized master is still removing its pid file.
        ServerProcess::waitFor(fn () => \file_exists($pidFile) ? null : true, 5, 'the failed master to take its pid file');
        self::assertFileDoesNotExist($pidFile, 'the failed master is gone and took its pid file');
    }

    public function testMaxRequestsRecyclesTheWorker(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--max-requests', '5']);
        $pids = [];
        for ($i = 0; $i < 12; $i++) {
            $response = ServerProcess::waitFor(function () use ($server) {
                try {
                    return RawHttp::get($server->address(), '/pid');
                } catch (\RuntimeException) {
                    return null;
                }
            }, 10, 'a response');
            self::assertSame(200, $response['status']);
            $pids[$response['body']] = ($pids[$response['body']] ?? 0) + 1;
        }
        self::assertGreaterThanOrEqual(3, \count($pids), 'a new worker after every 5 requests');
        foreach ($pids as $count) {
            self::assertLessThanOrEqual(5, $count);
        }
        $server->stop();
    }

    public function testStopLetsInFlightRequestsFinish(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1']);
        $client = new RawHttp($server->address());
        $client->send("GET /sleep?s=1 HTTP/1.1\r\nHost: t\r\n\r\n");
        \usleep(200_000);
        $master = $server->masterPid();
        \posix_kill($master, \SIGTERM);
        $response = $client->response();
        self::assertSame(200, $response['status']);
        self::assertSame('slept', $response['body']);
        self::assertSame('close', $response['headers']['connection'], 'a draining worker ends keep-alive');
        ServerProcess::waitFor(fn () => !$server->isRunning(), 15, 'the master to exit');
        // The port is released.
        $this->expectException(\RuntimeException::class);
        RawHttp::get($server->address());
    }

    public function testReloadUnderLoadLosesNoRequest(): void
    {
        if (!\is_executable('/usr/bin/wrk')) {
            self::markTestSkipped('wrk is not installed (Debian package wrk)');
        }
        $server = new ServerProcess([self::APP, '--workers', '2']);
        $before = ServerProcess::waitFor(fn () => \count($p = $server->workerPids()) === 2 ? $p : null, 15, 'workers');
        $wrk = \proc_open(['wrk', '-t1', '-c20', '-d4s', 'http://' . $server->address() . '/'], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        \usleep(1_000_000);
        [$code, $out] = $server->control('reload');
        self::assertSame(0, $code, $out);
        $output = \stream_get_contents($pipes[1]);
        \proc_close($wrk);
        $after = $server->workerPids();
        self::assertCount(2, $after);
        self::assertSame([], \array_intersect($before, $after), 'every worker was replaced');
        self::assertMatchesRegularExpression('/(\d+) requests in/', $output);
        \preg_match('/(\d+) requests in/', $output, $m);
        self::assertGreaterThan(100, (int) $m[1], $output);
        self::assertStringNotContainsString('Socket errors', $output, $output);
        self::assertStringNotContainsString('Non-2xx', $output, $output);
        $server->stop();
    }

    public function testStatusReportsEachWorkerFromTheMaster(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '2']);
        for ($i = 0; $i < 6; $i++) {
            RawHttp::get($server->address());
        }
        $status = ServerProcess::waitFor(function () use ($server) {
            $status = $server->status();
            $served = \array_sum(\array_column($status['workers'], 'requests'));
            return $served >= 6 ? $status : null;
        }, 10, 'the request counts to reach the master');
        self::assertSame($server->masterPid(), $status['master']['pid']);
        self::assertCount(2, $status['workers']);
        foreach ($status['workers'] as $worker) {
            foreach (['pid', 'uptime', 'requests', 'connections', 'coroutines', 'memory', 'rss', 'state'] as $field) {
                self::assertArrayHasKey($field, $worker);
            }
            self::assertTrue(\posix_kill($worker['pid'], 0));
        }
        [$code, $text] = $server->control('status');
        self::assertSame(0, $code);
        self::assertStringContainsString('requests', $text);
        self::assertStringContainsString((string) $status['workers'][0]['pid'], $text);
        $server->stop();
    }

    public function testAWorkerThatGarblesItsChannelIsStoppedAndReplacedWhileTheMasterServesOn(): void
    {
        $server = new ServerProcess([__DIR__ . '/fixtures/rogue-channel.php', '--workers', '1', '--grace', '2']);
        foreach (['type' => "unknown message type 'self-destruct'", 'huge' => 'a frame longer than 1048576 bytes'] as $what => $reason) {
            $pid = (int) RawHttp::get($server->address(), '/pid')['body'];
            self::assertSame('garbled', RawHttp::get($server->address(), "/garble?what=$what")['body'], 'the request in flight finishes');
            $newPid = ServerProcess::waitFor(function () use ($server, $pid) {
                try {
                    $now = (int) RawHttp::get($server->address(), '/pid')['body'];
                } catch (\RuntimeException) {
                    return null;
                }
                return $now !== $pid ? $now : null;
            }, 15, 'a replacement worker');
            self::assertNotSame($pid, $newPid);
            self::assertStringContainsString("Worker 1 (pid $pid) sent the master a malformed message ($reason", $server->output());
        }
        self::assertTrue($server->isRunning(), 'the master lives on');
        $status = ServerProcess::waitFor(fn () => ($s = $server->status())['workers'][0]['state'] === 'ready' ? $s : null, 10, 'a ready worker in status');
        self::assertSame(2, $status['master']['restarts']);
        $server->stop();
    }

    public function testSyncModeBlocksTheWorkerWhileCoroutineModeOverlaps(): void
    {
        $times = [];
        foreach (['sync', 'coroutine'] as $mode) {
            $server = new ServerProcess([self::APP, '--workers', '1', '--mode', $mode]);
            $clients = [];
            $start = \microtime(true);
            for ($i = 0; $i < 4; $i++) {
                $clients[] = (new RawHttp($server->address()))->send("GET /sleep?s=0.5 HTTP/1.1\r\nHost: t\r\n\r\n");
            }
            foreach ($clients as $client) {
                self::assertSame('slept', $client->response()['body']);
            }
            $times[$mode] = \microtime(true) - $start;
            $server->stop();
        }
        // Four 0.5 s waits on one worker: serialised in sync mode (>= 2 s), overlapped in coroutine mode.
        self::assertGreaterThanOrEqual(1.95, $times['sync']);
        self::assertLessThan($times['sync'] * 0.75, $times['coroutine']);
    }

    public function testDaemonModeStartsInTheBackgroundAndStops(): void
    {
        $pidFile = \sys_get_temp_dir() . '/weft-daemon-' . \getmypid() . '.pid';
        $log = \sys_get_temp_dir() . '/weft-daemon-' . \getmypid() . '.log';
        $port = self::freePort();
        [$code, $out] = ServerProcess::cli(['serve', self::APP, '--daemon', '--port', (string) $port, '--workers', '1', '--pid-file', $pidFile, '--log-file', $log]);
        self::assertSame(0, $code, $out);
        self::assertStringContainsString('started in the background', $out);
        self::assertSame('Hello World', RawHttp::get("127.0.0.1:$port")['body']);
        [$code, $out] = ServerProcess::cli(['stop', '--pid-file', $pidFile]);
        self::assertSame(0, $code, $out);
        self::assertFileDoesNotExist($pidFile);
        self::assertStringContainsString('Weft stopped', (string) \file_get_contents($log));
        @\unlink($log);
    }

    /**
     * Workers forked after READY (--max-requests, reload) start with the headers not sent: the master
     * prints nothing through PHP's output, whose first byte would mark them as sent in every child.
     */
    public function testReplacementWorkersStartWithTheHeadersNotSent(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--max-requests', '1']);
        $seen = [];
        while (\count($seen) < 3) {
            $response = ServerProcess::waitFor(function () use ($server) {
                try {
                    return RawHttp::get($server->address(), '/headers-sent');
                } catch (\RuntimeException) {
                    return null;
                }
            }, 10, 'a response');
            [$pid, $state] = \explode(' ', $response['body'], 2);
            $seen[$pid] = $state;
        }
        [$code, $out] = $server->control('reload');
        self::assertSame(0, $code, $out);
        $response = RawHttp::get($server->address(), '/headers-sent');
        [$pid, $state] = \explode(' ', $response['body'], 2);
        $seen[$pid] = $state;
        self::assertSame(['not sent'], \array_values(\array_unique($seen)), \json_encode($seen));
        $server->stop();
    }

    /** Output the master printed before it forked (here a prepended file) is named by each worker it affects. */
    public function testAWorkerStartingWithTheHeadersSentSaysWhy(): void
    {
        $prepend = \sys_get_temp_dir() . '/weft-prepend-' . \bin2hex(\random_bytes(4)) . '.php';
        \file_put_contents($prepend, "<?php\necho \"printed by the master\\n\";\n");
        try {
            // WEFT_NO_REEXEC: serve's restart with its own PHP settings would drop the prepended file.
            $server = new ServerProcess([self::APP, '--workers', '1'], ['WEFT_NO_REEXEC' => '1'], phpOptions: ['-d', "auto_prepend_file=$prepend"]);
            $output = ServerProcess::waitFor(static fn () => \str_contains($server->output(), 'marked the headers') ? $server->output() : null, 10, 'the warning');
            self::assertStringContainsString("warning: Output at $prepend:2 marked the headers as sent before this worker started", $output);
            $server->stop();
        } finally {
            @\unlink($prepend);
        }
    }

    public function testLineProtocolServer(): void
    {
        $server = new ServerProcess([\dirname(__DIR__, 3) . '/examples/echo-line.php', '--protocol', 'line', '--workers', '1', '--max-line', '16']);
        $client = \stream_socket_client('tcp://' . $server->address());
        \stream_set_timeout($client, 5);
        \fwrite($client, "hello world\r\nsecond\n");
        self::assertSame("hello world\r\n", \fgets($client));
        self::assertSame("second\n", \fgets($client));
        \fwrite($client, \str_repeat('x', 40) . "\n");
        self::assertSame("ERROR line too long (limit 16 bytes)\r\n", \fgets($client));
        self::assertSame('', (string) \fread($client, 10));
        self::assertTrue(\feof($client));
        $client = \stream_socket_client('tcp://' . $server->address());
        \fwrite($client, "quit\n");
        self::assertSame("bye\n", \fgets($client));
        $server->stop();
    }

    /** The handler's second argument is a Line\Peer; one typed with its former name, Line\Connection, still runs. */
    public function testALineHandlerTypedWithTheDeprecatedNameStillRuns(): void
    {
        $app = \tempnam(\sys_get_temp_dir(), 'weft-line-') . '.php';
        \file_put_contents($app, '<?php return static fn (string $line, Weft\Line\Connection $c): string => get_class($c) . " " . $line;');
        try {
            $server = new ServerProcess([$app, '--protocol', 'line', '--workers', '1']);
            $client = \stream_socket_client('tcp://' . $server->address());
            \stream_set_timeout($client, 5);
            \fwrite($client, "hi\n");
            self::assertSame("Weft\\Line\\Peer hi\n", \fgets($client));
            $server->stop();
        } finally {
            @\unlink($app);
        }
    }

    public function testCliRejectsBadUseWithOneLineAndCode2(): void
    {
        foreach ([
            [['serve', self::APP, '--bogus'], "unknown option '--bogus'"],
            [['serve', self::APP, '--workers', 'many'], "option '--workers' expects a whole number, got 'many'"],
            [['serve', self::APP, '--mode', 'turbo'], "option '--mode' expects one of coroutine, sync, fpm, got 'turbo'"],
            [['serve'], 'serve needs an application file'],
            [['serve', '/nonexistent.php'], "application file '/nonexistent.php' not found"],
            [['frobnicate'], "unknown command 'frobnicate'"],
            [['status', '--bogus'], "unknown option '--bogus'"],
        ] as [$args, $message]) {
            [$code, $out] = ServerProcess::cli($args);
            self::assertSame(2, $code, \implode(' ', $args) . ': ' . $out);
            self::assertSame(1, \substr_count(\trim($out), "\n") + 1, "one line: $out");
            self::assertStringContainsString($message, $out);
        }
        [$code, $out] = ServerProcess::cli(['serve', '--help']);
        self::assertSame(0, $code);
        self::assertStringContainsString('--max-requests', $out);
    }

    public function testPortInUseIsNamed(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1']);
        [$code, $out] = ServerProcess::cli(['serve', self::APP, '--port', (string) $server->port, '--pid-file', \sys_get_temp_dir() . '/weft-busy.pid']);
        self::assertSame(1, $code);
        self::assertStringContainsString("cannot listen on port {$server->port}", $out);
        self::assertStringContainsString('Address already in use', $out);
        $server->stop();
    }

    private static function freePort(): int
    {
        $socket = \stream_socket_server('tcp://127.0.0.1:0');
        $name = \stream_socket_get_name($socket, false);
        \fclose($socket);
        return (int) \substr($name, \strrpos($name, ':') + 1);
    }
}
