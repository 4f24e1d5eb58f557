<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\ServerProcess;

/** --access-log against a real `bin/weft serve`, with raw sockets and curl as the clients. */
final class AccessLogTest extends TestCase
{
    private const APP = __DIR__ . '/fixtures/access-app.php';
    /** Combined Log Format, then the duration and the worker's pid, then "incomplete" when cut. */
    private const LINE = '~^(?<remote>\S+) - - \[(?<time>\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4})\] "(?<request>[^"]*)" (?<status>\d{3}) (?<bytes>\d+) "(?<referer>[^"]*)" "(?<agent>[^"]*)" (?<duration>\d+\.\d{6}) (?<worker>\d+)(?<cut> incomplete)?$~';

    private string $log;

    protected function setUp(): void
    {
        $this->log = \sys_get_temp_dir() . '/weft-access-' . \bin2hex(\random_bytes(4)) . '.log';
    }

    protected function tearDown(): void
    {
        foreach ([$this->log, "$this->log.1", "$this->log.target"] as $file) {
            @\unlink($file);
        }
    }

    public function testCombinedLinesForGetPostAndHead(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--access-log', $this->log]);
        [$worker] = $server->workerPids();
        $this->exchange($server, "GET /a?b=1 HTTP/1.1\r\nHost: x\r\nUser-Agent: test-agent/1.0\r\nReferer: http://example.test/from\r\n\r\n"
            . "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"
            . "HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $lines = $this->waitForLines(3);
        $server->stop();

        $get = self::parse($lines[0]);
        self::assertSame(['127.0.0.1', 'GET /a?b=1 HTTP/1.1', '200', '11', 'http://example.test/from', 'test-agent/1.0', (string) $worker, ''], [
            $get['remote'], $get['request'], $get['status'], $get['bytes'], $get['referer'], $get['agent'], $get['worker'], $get['cut'] ?? '',
        ]);
        $time = \DateTimeImmutable::createFromFormat('d/M/Y:H:i:s O', $get['time']);
        self::assertNotFalse($time);
        self::assertLessThan(60, \abs(\time() - $time->getTimestamp()));
        $post = self::parse($lines[1]);
        self::assertSame(['POST /echo HTTP/1.1', '201', '5', '-', '-'], [$post['request'], $post['status'], $post['bytes'], $post['referer'], $post['agent']]);
        $head = self::parse($lines[2]);
        self::assertSame(['HEAD / HTTP/1.1', '200', '0'], [$head['request'], $head['status'], $head['bytes']]);
        self::assertCount(3, \file($this->log), 'one line per request');
        self::assertSame('0640', \substr(\sprintf('%o', \fileperms($this->log)), -4));
    }

    public function testJsonLinesParseAndCarryTheDocumentedFields(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--access-log', $this->log, '--access-log-format', 'json']);
        [$worker] = $server->workerPids();
        $this->exchange($server, "GET /json?q=%22 HTTP/1.1\r\nHost: x\r\nUser-Agent: a \"quoted\" agent\r\nConnection: close\r\n\r\n");
        $lines = $this->waitForLines(1);
        $server->stop();
        $record = \json_decode($lines[0], true, 8, \JSON_THROW_ON_ERROR);
        self::assertSame(
            ['time', 'remote', 'method', 'target', 'protocol', 'status', 'bytes', 'duration', 'worker', 'referer', 'user_agent', 'complete'],
            \array_keys($record),
        );
        self::assertSame(['127.0.0.1', 'GET', '/json?q=%22', 'HTTP/1.1', 200, 11, $worker, null, 'a "quoted" agent', true], [
            $record['remote'], $record['method'], $record['target'], $record['protocol'], $record['status'], $record['bytes'],
            $record['worker'], $record['referer'], $record['user_agent'], $record['complete'],
        ]);
        self::assertIsFloat($record['duration'] + 0.0);
        self::assertGreaterThanOrEqual(0, $record['duration']);
        self::assertMatchesRegularExpression('/,"duration":\d+\.\d{6},/', $lines[0], 'a decimal as in the combined format, never 3.9e-5');
        self::assertNotFalse(\DateTimeImmutable::createFromFormat(\DATE_ATOM, $record['time']), $record['time']);
    }

    public function testHostileBytesStayInsideTheirFieldInBothFormats(): void
    {
        // Raw bytes a client may send: obs-text (invalid UTF-8) in the target and headers, quotes,
        // backslashes, and a DEL and tab in a header value (the only controls a field value may hold).
        $request = "GET /p\xFF\xFE?q=\xC3\x28 HTTP/1.1\r\nHost: x\r\nUser-Agent: a\"b\\c\td\x7F\xFF\r\nReferer: \"-\" \"x\r\n\r\n";
        $server = new ServerProcess([self::APP, '--workers', '1', '--access-log', $this->log]);
        $this->exchange($server, $request . "GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $lines = $this->waitForLines(2);
        $server->stop();
        self::assertCount(2, $lines, 'one line per request');
        $line = self::parse($lines[0]);
        self::assertSame('GET /p\xFF\xFE?q=\xC3( HTTP/1.1', $line['request']);
        self::assertSame('a\x22b\x5Cc\x09d\x7F\xFF', $line['agent']);
        self::assertSame('\x22-\x22 \x22x', $line['referer']);
        self::assertSame('GET /last HTTP/1.1', self::parse($lines[1])['request']);

        \unlink($this->log);
        $server = new ServerProcess([self::APP, '--workers', '1', '--access-log', $this->log, '--access-log-format', 'json']);
        $this->exchange($server, \str_replace('HTTP/1.1', 'HTTP/1.0', $request));
        $lines = $this->waitForLines(1);
        $server->stop();
        $record = \json_decode($lines[0], true, 8, \JSON_THROW_ON_ERROR);
        self::assertSame("/p\u{FFFD}\u{FFFD}?q=\u{FFFD}(", $record['target']);
        self::assertSame("a\"b\\c\td\x7F\u{FFFD}", $record['user_agent']);
        self::assertSame('"-" "x', $record['referer']);
        self::assertSame('HTTP/1.0', $record['protocol']);
    }

    public function testAStreamedResponseLogsTheBodyBytesSentAndACutOneSaysSo(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--access-log', $this->log, '--access-log-format', 'json']);
        $this->exchange($server, "GET /stream?n=7 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $streamed = \json_decode($this->waitForLines(1)[0], true);
        self::assertSame([200, 7000, true], [$streamed['status'], $streamed['bytes'], $streamed['complete']]);

        // A client that reads a little of a 26 MB body and hangs up.
        $socket = \stream_socket_client('tcp://' . $server->address(), $errno, $error, 5);
        \fwrite($socket, "GET /endless HTTP/1.1\r\nHost: x\r\n\r\n");
        $read = '';
        while (\strlen($read) < 20000 && !\feof($socket)) {
            $read .= (string) \fread($socket, 8192);
        }
        \fclose($socket);
        $cut = \json_decode($this->waitForLines(2, 20)[1], true);
        $server->stop();
        self::assertSame(['/endless', 200, false], [$cut['target'], $cut['status'], $cut['complete']]);
        self::assertGreaterThan(0, $cut['bytes']);
        self::assertLessThan(400 * 65536, $cut['bytes'], 'the bytes written before the cut, not the whole body');
    }

    public function testAPipelinedBurstGivesOneLinePerRequestInOrder(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--access-log', $this->log]);
        $burst = '';
        for ($i = 1; $i <= 20; $i++) {
            $burst .= "GET /?i=$i HTTP/1.1\r\nHost: x\r\n" . ($i === 20 ? "Connection: close\r\n" : '') . "\r\n";
        }
        $this->exchange($server, $burst);
        $lines = $this->waitForLines(20);
        $server->stop();
        self::assertCount(20, $lines);
        foreach ($lines as $n => $line) {
            self::assertSame('GET /?i=' . ($n + 1) . ' HTTP/1.1', self::parse($line)['request']);
        }
    }

    public function testTheServersOwnRefusalsAreLogged(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--access-log', $this->log, '--max-body', '100']);
        // A request line, then a missing Host: a 400 that names the request.
        self::assertStringStartsWith('HTTP/1.1 400', $this->exchange($server, "GET /no-host HTTP/1.1\r\n\r\n"));
        // Bytes that never make a request line: "-".
        self::assertStringStartsWith('HTTP/1.1 400', $this->exchange($server, "NOT HTTP AT ALL\r\n\r\n"));
        // A body over --max-body: 413, with the request line.
        self::assertStringStartsWith('HTTP/1.1 413', $this->exchange($server, "POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"));
        $lines = $this->waitForLines(3);
        $server->stop();
        self::assertSame(['GET /no-host HTTP/1.1', '400'], [self::parse($lines[0])['request'], self::parse($lines[0])['status']]);
        self::assertSame(['-', '400'], [self::parse($lines[1])['request'], self::parse($lines[1])['status']]);
        self::assertSame(['POST /big HTTP/1.1', '413'], [self::parse($lines[2])['request'], self::parse($lines[2])['status']]);
        self::assertGreaterThan(0, (int) self::parse($lines[0])['bytes']);
    }

    public function testAWebSocketUpgradeIsLoggedAs101(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--access-log', $this->log]);
        $answer = $this->exchange($server, "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            . "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
        self::assertStringStartsWith('HTTP/1.1 101', $answer);
        $line = self::parse($this->waitForLines(1)[0]);
        $server->stop();
        self::assertSame(['GET /ws HTTP/1.1', '101', '0'], [$line['request'], $line['status'], $line['bytes']]);
    }

    public function testDashWritesToStdoutInSyncModeToo(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--mode', 'sync', '--access-log', '-']);
        $this->exchange($server, "GET /to-stdout HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $line = ServerProcess::waitFor(
            static fn () => \preg_match('~^.*"GET /to-stdout HTTP/1\.1" 200 11 .*$~m', $server->output(), $m) ? $m[0] : null,
            10,
            'the access line on stdout',
        );
        $server->stop();
        self::assertMatchesRegularExpression(self::LINE, $line);
        self::assertStringNotContainsString('worker', $line, 'an access line, not a server log record of the worker\'s output');
    }

    public function testSigusr2ReopensTheAccessLogAfterARename(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '2', '--access-log', $this->log]);
        $workers = $server->workerPids();
        $this->exchange($server, "GET /before HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $this->waitForLines(1);

        \rename($this->log, "$this->log.1");   // what logrotate does
        \posix_kill($server->masterPid(), \SIGUSR1);
        ServerProcess::waitFor(static function () use ($server, $workers) {
            foreach ($workers as $pid) {
                if (!\str_contains($server->output(), "[worker $pid] info: Log file and access log reopened (SIGUSR1)")) {
                    return null;
                }
            }
            return true;
        }, 10, 'both workers reopening');
        for ($i = 0; $i < 4; $i++) {   // new connections: both workers are likely to answer some
            $this->exchange($server, "GET /after HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        }
        $new = $this->waitForLines(4);
        // No process of the server holds the renamed file any more (the master never wrote to it):
        // logrotate's later deletion frees its disk space.
        foreach (\array_merge([$server->masterPid()], $workers) as $pid) {
            foreach (\glob("/proc/$pid/fd/*") ?: [] as $fd) {
                self::assertNotSame("$this->log.1", @\readlink($fd), "pid $pid still holds the rotated access log");
            }
        }
        $server->stop();
        foreach ($new as $line) {
            self::assertSame('GET /after HTTP/1.1', self::parse($line)['request']);
        }
        self::assertSame(0640, \fileperms($this->log) & 0777);
        $old = (string) \file_get_contents("$this->log.1");
        self::assertStringContainsString('GET /before', $old);
        self::assertStringNotContainsString('/after', $old);
    }

    public function testAPlantedSymlinkAtThePathIsRefused(): void
    {
        \touch("$this->log.target");
        \symlink("$this->log.target", $this->log);
        [$code, $output] = ServerProcess::cli(['serve', self::APP, '--port', '0', '--workers', '1', '--access-log', $this->log], 30);
        self::assertSame(1, $code, $output);
        self::assertStringContainsString("Cannot open the access log '$this->log'", $output);
        self::assertSame('', \file_get_contents("$this->log.target"));
    }

    public function testOptionsComeFromTheEnvironmentAndBadValuesAreUsageErrors(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1'], ['WEFT_ACCESS_LOG' => $this->log, 'WEFT_ACCESS_LOG_FORMAT' => 'json']);
        $this->exchange($server, "GET /env HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        $record = \json_decode($this->waitForLines(1)[0], true, 8, \JSON_THROW_ON_ERROR);
        $server->stop();
        self::assertSame('/env', $record['target']);

        [$code, $output] = ServerProcess::cli(['serve', self::APP, '--port', '0', '--access-log', $this->log, '--access-log-format', 'xml'], 30);
        self::assertSame(2, $code, $output);
        self::assertStringContainsString('access-log-format', $output);

        // A daemon has no stdout of its own: "-" would write to the terminal that started it.
        [$code, $output] = ServerProcess::cli(['serve', self::APP, '--port', '0', '--daemon', '--access-log', '-'], 30);
        self::assertSame(2, $code, $output);
        self::assertStringContainsString("option '--access-log -' (stdout) cannot be used with --daemon: give a file", $output);
    }

    /** Writes raw bytes on a fresh connection and reads until the server closes it (or 5 s). */
    private function exchange(ServerProcess $server, string $bytes): string
    {
        $socket = \stream_socket_client('tcp://' . $server->address(), $errno, $error, 5);
        self::assertNotFalse($socket, $error);
        \stream_set_timeout($socket, 5);
        \fwrite($socket, $bytes);
        $answer = '';
        $deadline = \microtime(true) + 5;
        while (!\feof($socket) && \microtime(true) < $deadline) {
            $answer .= (string) \fread($socket, 65536);
            if (\str_contains($answer, '101 Switching Protocols') && \str_contains($answer, "\r\n\r\n")) {
                break;
            }
        }
        \fclose($socket);
        return $answer;
    }

    /** @return list<string> the log's lines once it has at least $count */
    private function waitForLines(int $count, float $timeout = 10): array
    {
        return ServerProcess::waitFor(function () use ($count) {
            $lines = @\file($this->log, \FILE_IGNORE_NEW_LINES | \FILE_SKIP_EMPTY_LINES) ?: [];
            return \count($lines) >= $count ? $lines : null;
        }, $timeout, "$count access log line(s)");
    }

    /** @return array<string, string> */
    private static function parse(string $line): array
    {
        self::assertMatchesRegularExpression(self::LINE, $line);
        \preg_match(self::LINE, $line, $m);
        return $m;
    }
}
