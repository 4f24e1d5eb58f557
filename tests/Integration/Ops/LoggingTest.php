<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\ServerProcess;

/** The server log as an operator reads it, from real server processes. */
final class LoggingTest extends TestCase
{
    private const APP = __DIR__ . '/fixtures/ops-app.php';
    private string $log;

    protected function setUp(): void
    {
        $this->log = \sys_get_temp_dir() . '/weft-log-' . \bin2hex(\random_bytes(4)) . '.log';
    }

    protected function tearDown(): void
    {
        foreach ([$this->log, "$this->log.1", "$this->log.target"] as $file) {
            @\unlink($file);
        }
    }

    public function testSigusr1ReopensTheLogInTheMasterAndEveryWorker(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '2', '--log-file', $this->log]);
        $workers = $server->workerPids();
        self::assertCount(2, $workers);
        self::get($server, '/log?m=before');
        ServerProcess::waitFor(fn () => \str_contains((string) @\file_get_contents($this->log), 'from the application: before'), 5, 'the first line');

        \rename($this->log, "$this->log.1");   // what logrotate does
        \posix_kill($server->masterPid(), \SIGUSR1);
        $new = ServerProcess::waitFor(function () use ($workers) {
            $text = (string) @\file_get_contents($this->log);
            foreach ($workers as $pid) {
                if (!\str_contains($text, "[worker $pid] info: Log file reopened (SIGUSR1)")) {
                    return null;
                }
            }
            return \str_contains($text, 'info: Log file reopened (SIGUSR1), 2 worker(s) told') ? $text : null;
        }, 10, 'the master and both workers in the new file');
        self::assertStringContainsString("[master {$server->masterPid()}]", $new);

        self::get($server, '/log?m=after');
        $new = ServerProcess::waitFor(fn () => \str_contains($text = (string) \file_get_contents($this->log), 'from the application: after') ? $text : null, 5, 'a request line in the new file');
        self::assertMatchesRegularExpression('/\[worker (' . \implode('|', $workers) . ')\] warning: from the application: after/', $new);
        $old = (string) \file_get_contents("$this->log.1");
        self::assertStringContainsString('from the application: before', $old);
        self::assertStringNotContainsString('after', $old);
        self::assertStringNotContainsString('reopened', $old);
        foreach (\array_merge([$server->masterPid()], $workers) as $pid) {
            foreach (\glob("/proc/$pid/fd/*") ?: [] as $fd) {
                self::assertNotSame("$this->log.1", @\readlink($fd), "pid $pid still holds the rotated log");
            }
        }
        $server->stop();
        self::assertStringContainsString('Weft stopped', (string) \file_get_contents($this->log));
    }

    public function testExceptionsAreLoggedOnceWithTheApplicationFrameFirst(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--log-file', $this->log]);
        self::assertSame(500, self::get($server, '/throw')[0]);
        $text = ServerProcess::waitFor(fn () => \str_contains($t = (string) @\file_get_contents($this->log), 'frame(s) in Weft') ? $t : null, 5, 'the exception');
        $server->stop();
        self::assertSame(1, \substr_count($text, 'the application failed on purpose'), $text);
        self::assertMatchesRegularExpression('~\] error: GET /throw: DomainException: the application failed on purpose\n  at .*/fixtures/ops-app\.php:\d+\n  \(\+\d+ frame\(s\) in Weft\)\n~', $text);
        self::assertStringNotContainsString('Scheduler', $text);
        self::assertStringNotContainsString('#', \substr($text, (int) \strpos($text, 'DomainException')));
    }

    public function testJsonFormatAndLevel(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--log-file', $this->log, '--log-format', 'json', '--log-level', 'warning']);
        self::get($server, '/throw');
        self::get($server, '/log?m=json');
        self::get($server, '/structured');
        ServerProcess::waitFor(fn () => \str_contains((string) @\file_get_contents($this->log), 'structured S1'), 5, 'the records');
        $server->stop();
        $records = \array_map(static fn (string $line) => \json_decode($line, true, 512, \JSON_THROW_ON_ERROR), \file($this->log, \FILE_IGNORE_NEW_LINES | \FILE_SKIP_EMPTY_LINES));
        foreach ($records as $record) {
            self::assertContains($record['level'], ['warning', 'error', 'critical', 'alert', 'emergency'], 'no info record at --log-level warning');
            self::assertArrayHasKey('time', $record);
            self::assertIsInt($record['pid']);
        }
        $error = \array_values(\array_filter($records, static fn ($r) => $r['level'] === 'error'))[0];
        self::assertSame('worker', $error['role']);
        self::assertSame('GET /throw: DomainException: the application failed on purpose', $error['message']);
        self::assertSame('DomainException', $error['exception']['class']);
        self::assertStringEndsWith('fixtures/ops-app.php', $error['exception']['file']);
        self::assertGreaterThan(0, $error['exception']['weft_frames']);
        $app = \array_values(\array_filter($records, static fn ($r) => $r['message'] === 'from the application: json'));
        self::assertCount(1, $app);
        self::assertSame(['what' => 'json'], $app[0]['context']);
        // Arrays in the context stay structured; what cannot be encoded (too deep, a plain object) is left out.
        $structured = \array_values(\array_filter($records, static fn ($r) => $r['message'] === 'structured S1'));
        self::assertCount(1, $structured);
        self::assertSame(['what' => 'S1', 'user' => ['id' => 7, 'roles' => ['admin']]], $structured[0]['context']);
    }

    public function testInputCannotForgeATextRecordAndJsonRecordsStayValid(): void
    {
        // A decoded %0A in what the application logs, or quotes in an exception, would start a line
        // that looks like a record of its own; ESC would reach an operator's terminal.
        $forged = '%0A2026-01-01T00:00:00.000%2B00:00%20%5Bmaster%201%5D%20error:%20forged%0D%1B%5B31m%FF';
        $server = new ServerProcess([self::APP, '--workers', '1', '--log-file', $this->log]);
        self::get($server, "/log?m=T1$forged");
        self::assertSame(500, self::get($server, "/reject?m=T2$forged")[0]);
        $text = ServerProcess::waitFor(fn () => \str_contains($t = (string) @\file_get_contents($this->log), 'rejected: T2') ? $t : null, 5, 'the records');
        $server->stop();
        self::assertStringContainsString('warning: from the application: T1\n2026-01-01T00:00:00.000+00:00 [master 1] error: forged\r\x1B[31m' . "\xFF\n", $text);
        self::assertStringContainsString(': InvalidArgumentException: rejected: T2\n2026-01-01T00:00:00.000+00:00 [master 1] error: forged\r\x1B[31m' . "\xFF\n  at ", $text);
        self::assertStringNotContainsString("\x1B", $text);
        self::assertStringNotContainsString("\r", $text);
        foreach (\explode("\n", \rtrim($text, "\n")) as $line) {
            // Every line is a record of its own (it starts with a time) or an indented trace line.
            self::assertMatchesRegularExpression('~^(\d{4}-\d\d-\d\dT[\d:.]+[+-]\d\d:\d\d \[(master|worker) \d+\] |  )~', $line);
            self::assertStringNotContainsString('[master 1]', \substr($line, 0, 40), 'no forged record');
        }

        \unlink($this->log);
        $server = new ServerProcess([self::APP, '--workers', '1', '--log-file', $this->log, '--log-format', 'json']);
        self::get($server, "/log?m=J1$forged%00%C3%28");
        self::get($server, "/reject?m=J2$forged%C3%28");
        ServerProcess::waitFor(fn () => \str_contains((string) @\file_get_contents($this->log), 'rejected: J2'), 5, 'the records');
        $server->stop();
        $messages = [];
        foreach (\file($this->log, \FILE_IGNORE_NEW_LINES) as $line) {
            $messages[] = \json_decode($line, true, 512, \JSON_THROW_ON_ERROR)['message'];
        }
        self::assertContains("from the application: J1\n2026-01-01T00:00:00.000+00:00 [master 1] error: forged\r\e[31m\u{FFFD}\0\u{FFFD}(", $messages);
        self::assertContains("GET /reject?m=J2$forged%C3%28: InvalidArgumentException: rejected: J2\n2026-01-01T00:00:00.000+00:00 [master 1] error: forged\r\e[31m\u{FFFD}\u{FFFD}(", $messages);
    }

    public function testWhatTheApplicationPrintsIsLoggedTaggedWithItsWorker(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--log-file', $this->log]);
        [$pid] = $server->workerPids();
        self::assertSame('written', self::get($server, '/output?m=Z9')[1]);
        $text = ServerProcess::waitFor(fn () => \str_contains($t = (string) @\file_get_contents($this->log), 'warning Z9') ? $t : null, 5, 'the output lines');
        $server->stop();
        self::assertStringContainsString("[worker $pid] info: stdout: echoed Z9\n", $text);
        self::assertStringContainsString("[worker $pid] info: stdout: string(9) \"dumped Z9\"\n", $text);
        self::assertStringContainsString("[worker $pid] warning: stderr: error_log Z9\n", $text);
        self::assertMatchesRegularExpression("/\[worker $pid\] warning: stderr: PHP Warning:  warning Z9 in .*ops-app\.php on line \d+\n/", $text);
        self::assertStringNotContainsString('echoed Z9', $server->output(), 'nothing reaches the terminal untagged');
    }

    public function testADaemonTagsTheApplicationsOutputToo(): void
    {
        $socket = \stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) \substr((string) \strrchr((string) \stream_socket_get_name($socket, false), ':'), 1);
        \fclose($socket);
        $pidFile = "$this->log.pid";
        [$code, $out] = ServerProcess::cli(['serve', self::APP, '--port', (string) $port, '--workers', '1', '--daemon', '--pid-file', $pidFile, '--log-file', $this->log]);
        self::assertSame(0, $code, $out);
        try {
            self::assertSame('written', (string) \file_get_contents("http://127.0.0.1:$port/output?m=D4"));
            $text = ServerProcess::waitFor(fn () => \str_contains($t = (string) @\file_get_contents($this->log), 'warning D4') ? $t : null, 10, 'the output lines');
        } finally {
            ServerProcess::cli(['stop', '--pid-file', $pidFile]);
        }
        self::assertMatchesRegularExpression('/\[worker \d+\] info: stdout: echoed D4\n/', $text);
        self::assertMatchesRegularExpression('/\[worker \d+\] warning: stderr: error_log D4\n/', $text);
        self::assertStringNotContainsString('not redirected', $text);
        self::assertDoesNotMatchRegularExpression('/^echoed D4$/m', $text, 'no raw line');
    }

    public function testFpmModeLogsWholeLinesTheSameWay(): void
    {
        foreach (['/usr/sbin/nginx', '/usr/sbin/php-fpm8.2'] as $binary) {
            if (!\is_executable($binary)) {
                self::markTestSkipped("$binary is not installed");
            }
        }
        $server = new ServerProcess([self::APP, '--mode', 'fpm', '--workers', '1']);
        self::assertSame(500, self::get($server, '/throw')[0]);
        self::get($server, '/output?m=F7');
        self::get($server, '/log?m=F8');
        $text = ServerProcess::waitFor(static fn () => \str_contains($t = $server->output(), 'from the application: F8') ? $t : null, 10, 'the fpm log lines');
        $server->stop();
        self::assertMatchesRegularExpression('~\[fpm worker \d+\] error: GET /throw: DomainException: the application failed on purpose\n  at .*ops-app\.php:\d+\n~', $text);
        self::assertStringContainsString('[fpm worker] warning: stderr: error_log F7', $text);
        self::assertStringContainsString('[fpm worker] warning: stderr: PHP Warning:  warning F7', $text);
        self::assertMatchesRegularExpression('~\[fpm worker \d+\] warning: from the application: F8~', $text);
        self::assertMatchesRegularExpression('~\[fpm worker \d+\] info: stdout: echoed F7\n~', $text);
        self::assertMatchesRegularExpression('~\[fpm worker \d+\] info: stdout: string\(9\) "dumped F7"\n~', $text);
        self::assertStringNotContainsString('said into stderr', $text);
    }

    public function testFpmModeTagsEveryLineOfAWarningThatQuotesInput(): void
    {
        foreach (['/usr/sbin/nginx', '/usr/sbin/php-fpm8.2'] as $binary) {
            if (!\is_executable($binary)) {
                self::markTestSkipped("$binary is not installed");
            }
        }
        // error_log() and trigger_error() with a decoded %0A: PHP writes the line break as it is.
        $forged = 'Q3%0A2026-01-01T00:00:00.000%2B00:00%20%5Bmaster%201%5D%20error:%20forged';
        foreach ([[], ['--log-file', $this->log]] as $extra) {
            $server = new ServerProcess(\array_merge([self::APP, '--mode', 'fpm', '--workers', '1'], $extra));
            self::get($server, "/output?m=$forged");
            self::get($server, '/log?m=Q4');
            $read = fn () => $extra === [] ? $server->output() : (string) @\file_get_contents($this->log);
            $text = ServerProcess::waitFor(static fn () => \substr_count($t = $read(), 'error: forged') >= 4 && \str_contains($t, 'application: Q4') ? $t : null, 10, 'the fpm log lines');
            $server->stop();
            self::assertDoesNotMatchRegularExpression('/^2026-01-01/m', $text, 'no line passes for a record');
            self::assertMatchesRegularExpression('~\[fpm worker\] warning: stderr: 2026-01-01T00:00:00\.000\+00:00 \[master 1\] error: forged~', $text);
            self::assertMatchesRegularExpression('~\[fpm worker \d+\] warning: from the application: Q4\n~', $text, 'the front controller\'s own records still pass');
            @\unlink($this->log);
        }
    }

    public function testFpmModeReopensItsLogOnSigusr1(): void
    {
        foreach (['/usr/sbin/nginx', '/usr/sbin/php-fpm8.2'] as $binary) {
            if (!\is_executable($binary)) {
                self::markTestSkipped("$binary is not installed");
            }
        }
        $server = new ServerProcess([self::APP, '--mode', 'fpm', '--workers', '1', '--log-file', $this->log]);
        self::get($server, '/log?m=before');
        ServerProcess::waitFor(fn () => \str_contains((string) @\file_get_contents($this->log), 'from the application: before'), 10, 'the first line');
        \rename($this->log, "$this->log.1");
        \posix_kill($server->masterPid(), \SIGUSR1);
        ServerProcess::waitFor(fn () => \str_contains((string) @\file_get_contents($this->log), 'Log file reopened (SIGUSR1)'), 10, 'the supervisor in the new file');
        self::get($server, '/log?m=after');
        self::get($server, '/output?m=after2');
        $text = ServerProcess::waitFor(fn () => \str_contains($t = (string) @\file_get_contents($this->log), 'error_log after2') ? $t : null, 10, 'the fpm workers in the new file');
        self::assertMatchesRegularExpression('~\[fpm worker \d+\] warning: from the application: after~', $text);
        $server->stop();
        self::assertStringNotContainsString('after', (string) \file_get_contents("$this->log.1"));
    }

    public function testAnUnsafeLogPathIsAStartErrorInEveryModeAndANewLogIs0640(): void
    {
        $target = "$this->log.target";
        \symlink($target, $this->log);
        try {
            foreach (['coroutine', 'sync', 'fpm'] as $mode) {
                [$code, $out] = ServerProcess::cli(['serve', self::APP, '--mode', $mode, '--port', '0', '--workers', '1', '--log-file', $this->log], 30);
                self::assertSame(1, $code, "$mode: $out");
                self::assertSame("weft: Cannot open the log file '$this->log': '$this->log' is a symbolic link\n", $out, $mode);
                self::assertFileDoesNotExist($target);
            }
        } finally {
            \unlink($this->log);
        }
        foreach (['/usr/sbin/nginx', '/usr/sbin/php-fpm8.2'] as $binary) {
            if (!\is_executable($binary)) {
                self::markTestSkipped("$binary is not installed");
            }
        }
        $server = new ServerProcess([self::APP, '--mode', 'fpm', '--workers', '1', '--log-file', $this->log]);
        self::get($server, '/log?m=perm');
        ServerProcess::waitFor(fn () => \str_contains((string) @\file_get_contents($this->log), 'from the application: perm'), 10, 'the fpm record');
        // Rotated, then a symlink planted at the path: nothing writes through it.
        \rename($this->log, "$this->log.1");
        \symlink($target, $this->log);
        \posix_kill($server->masterPid(), \SIGUSR1);
        ServerProcess::waitFor(fn () => \str_contains((string) \file_get_contents("$this->log.1"), 'Cannot reopen the log'), 10, 'the refusal in the old file');
        self::get($server, '/log?m=after');
        self::get($server, '/output?m=after');
        $server->stop();
        self::assertFileDoesNotExist($target, (string) @\file_get_contents($target));
        self::assertSame('0640', \substr(\sprintf('%o', \fileperms("$this->log.1")), -4));
    }

    public function testABadLogFormatIsAUsageError(): void
    {
        [$code, $out] = ServerProcess::cli(['serve', self::APP, '--log-format', 'xml']);
        self::assertSame(2, $code);
        self::assertStringContainsString("option '--log-format' expects one of text, json, got 'xml'", $out);
    }

    /** @return array{int, string} */
    private static function get(ServerProcess $server, string $path): array
    {
        $body = @\file_get_contents("http://{$server->address()}$path", false, \stream_context_create(['http' => ['ignore_errors' => true, 'timeout' => 10]]));
        return [(int) \explode(' ', $http_response_header[0] ?? 'HTTP/1.1 0')[1], (string) $body];
    }
}
