<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Server;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\ServerProcess;

/**
 * Crowds of real sockets that ask for much and never read, against one worker with default options
 * (--memory-limit 128M, so an output budget of 32 MB): the worker lives on, answers a bystander and a
 * keep-alive connection opened before the crowd, and says whom it closed. Before the worker-wide
 * budget, each of these cases ended the worker at its memory limit (every connection on it cut).
 *
 * "Settled" is observed, never slept for: every socket of the crowd has received its response head
 * (or was closed), so every request was dispatched and its output queued.
 */
final class OutputBudgetTest extends TestCase
{
    private const APP = __DIR__ . '/../fixtures/output-app.php';
    private const CLOSED_LINE = 'connection(s) whose output waited longest unread: the worker held';

    private static string $root;
    private ?ServerProcess $server = null;
    /** @var list<resource> */
    private array $crowd = [];

    public static function setUpBeforeClass(): void
    {
        self::$root = \sys_get_temp_dir() . '/weft-output-' . \bin2hex(\random_bytes(4));
        \mkdir(self::$root);
        \file_put_contents(self::$root . '/hello.txt', "hello\n");
        // 1 GiB that takes no disk: a download no client of these tests ever finishes.
        $big = \fopen(self::$root . '/big.bin', 'wb');
        \ftruncate($big, 1 << 30);
        \fclose($big);
    }

    public static function tearDownAfterClass(): void
    {
        \exec('rm -rf ' . \escapeshellarg(self::$root));
    }

    protected function tearDown(): void
    {
        foreach ($this->crowd as $socket) {
            @\fclose($socket);
        }
        $this->crowd = [];
        $this->server?->stop();
        $this->server = null;
    }

    public function testAThousandDownloadersThatNeverReadLeaveTheWorkerServing(): void
    {
        $server = $this->serve();
        $pid = $this->workerPid();
        $keepAlive = $this->keepAliveBystander();
        // The select loop (no extension) watches descriptors below 1024 only, and each download holds
        // its socket and its file: a crowd that leaves room for the bystander.
        $loop = ServerProcess::waitFor(fn () => $server->status()['workers'][0]['loop'] ?? null, 10.0, 'the worker\'s stats');
        $this->crowd("GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n", $loop === 'select' ? 400 : 1000);
        $this->awaitHeads();

        $this->assertTheWorkerServesOn($pid, $keepAlive, 1.0);
        $this->awaitClosedLine();
        self::assertSame($pid, $this->workerPid());
    }

    public function testClientsThatNeverReadLargeApplicationAnswersDoNotExhaustTheWorker(): void
    {
        $server = $this->serve();
        $pid = $this->workerPid();
        $keepAlive = $this->keepAliveBystander();
        // 20 x 8 MB built whole by the application: 160 MB, more than the worker's 128 MB.
        $this->crowd("GET /big?mb=8 HTTP/1.1\r\nHost: t\r\n\r\n", 20);
        $this->awaitHeads();

        $this->assertTheWorkerServesOn($pid, $keepAlive);
        $this->awaitClosedLine();
        self::assertSame($pid, $this->workerPid());
        self::assertMatchesRegularExpression('/Closed \d+ ' . \preg_quote(self::CLOSED_LINE, '/') . ' \d+ bytes of output queued for clients, over its output budget of 33554432 \(see --memory-limit\); freed \d+ bytes: #\d+ 127\.0\.0\.1:\d+ \(\d+ bytes unsent, none read for [\d.]+ s\)/', $server->output());
    }

    public function testPipeliningClientsThatNeverReadDoNotExhaustTheWorker(): void
    {
        $server = $this->serve();
        $pid = $this->workerPid();
        $keepAlive = $this->keepAliveBystander();
        // Each stops being read at 1 MB of unread answers; 150 of them held 150 MB before.
        $this->crowd(\str_repeat("GET /big?kb=256 HTTP/1.1\r\nHost: t\r\n\r\n", 64), 150);
        $this->awaitHeads();

        $this->assertTheWorkerServesOn($pid, $keepAlive);
        $this->awaitClosedLine();
        self::assertSame($pid, $this->workerPid());
    }

    public function testStreamedBodiesWaitForTheBudgetInsteadOfPilingUp(): void
    {
        $this->serve();
        $pid = $this->workerPid();
        $keepAlive = $this->keepAliveBystander();
        $this->figures(reset: true);
        // 150 producers of 64 MB each: their writers are suspended once the worker holds its budget.
        $this->crowd("GET /stream?mb=64 HTTP/1.1\r\nHost: t\r\n\r\n", 150);
        $this->awaitHeads();

        $this->assertTheWorkerServesOn($pid, $keepAlive);
        // PHP's own peak allocation in the worker: about the 32 MB budget, far below the 150 MB the
        // producers would have queued (one worker, so the figure is the same worker's).
        self::assertLessThan(64 * 1024 * 1024, $this->figures()['peak']);
    }

    public function testALargeStringBodyToASlowReaderIsNotCopiedOnEveryPartialWrite(): void
    {
        $this->serve();
        $this->figures(reset: true);
        $socket = \socket_create(\AF_INET, \SOCK_STREAM, \SOL_TCP);
        \socket_set_option($socket, \SOL_SOCKET, \SO_RCVBUF, 16384);
        \socket_set_option($socket, \SOL_SOCKET, \SO_RCVTIMEO, ['sec' => 30, 'usec' => 0]);
        self::assertTrue(\socket_connect($socket, '127.0.0.1', $this->server->port));
        \socket_write($socket, "GET /big?mb=40 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
        $bytes = 0;
        $reads = 0;
        while (($chunk = \socket_read($socket, 16384)) !== false && $chunk !== '') {
            $bytes += \strlen($chunk);
            if (++$reads % 16 === 0) {
                \usleep(1000); // a slow reader: the server writes a little at a time, from an offset
            }
        }
        \socket_close($socket);
        self::assertGreaterThan(40 * 1024 * 1024, $bytes);
        // The 40 MB body itself, plus far less than a copy of it: the rest of a partly sent piece is
        // written a window at a time, not copied whole on each writable event.
        self::assertLessThan(48 * 1024 * 1024, $this->figures()['peak']);
    }

    private function serve(): ServerProcess
    {
        return $this->server = new ServerProcess([self::APP, '--workers', '1', '--static', self::$root]);
    }

    /** @return array{pid: int, memory: int, peak: int} */
    private function figures(bool $reset = false): array
    {
        $response = RawHttp::get($this->server->address(), $reset ? '/figures?reset=1' : '/figures');
        self::assertSame(200, $response['status'], $response['raw']);
        return \json_decode($response['body'], true, 512, \JSON_THROW_ON_ERROR);
    }

    private function workerPid(): int
    {
        return $this->figures()['pid'];
    }

    private function keepAliveBystander(): RawHttp
    {
        $client = new RawHttp($this->server->address());
        $client->send("GET /small HTTP/1.1\r\nHost: t\r\n\r\n");
        self::assertSame('ok', $client->response()['body']);
        return $client;
    }

    private function crowd(string $request, int $count): void
    {
        for ($i = 0; $i < $count; $i++) {
            $socket = \stream_socket_client('tcp://' . $this->server->address(), $errno, $error, 10);
            self::assertNotFalse($socket, "client $i: $error");
            \fwrite($socket, $request);
            $this->crowd[] = $socket;   // never read beyond its first response head
        }
    }

    /**
     * Waits until every socket of the crowd has its first response head, or was closed. Swept without
     * select(): a thousand sockets have descriptors past its limit of 1024.
     */
    private function awaitHeads(float $timeout = 60.0): void
    {
        $pending = [];
        foreach ($this->crowd as $i => $socket) {
            \stream_set_blocking($socket, false);
            $pending[$i] = '';
        }
        $deadline = \microtime(true) + $timeout;
        while ($pending !== []) {
            self::assertLessThan($deadline, \microtime(true), \count($pending) . ' clients of the crowd got no response head');
            $progress = false;
            foreach ($pending as $i => $head) {
                $chunk = @\fread($this->crowd[$i], 1024);
                if ($chunk === false || ($chunk === '' && \feof($this->crowd[$i]))) {
                    unset($pending[$i]); // closed by the server
                    $progress = true;
                } elseif ($chunk !== '') {
                    $progress = true;
                    if (\str_contains($head . $chunk, "\r\n\r\n")) {
                        unset($pending[$i]);
                    } else {
                        $pending[$i] = $head . $chunk;
                    }
                }
            }
            if (!$progress) {
                \usleep(20_000);
            }
        }
    }

    /** The hoarders are closed once the output they hold passes the budget: the log names them. */
    private function awaitClosedLine(): void
    {
        ServerProcess::waitFor(fn (): bool => \str_contains($this->server->output(), self::CLOSED_LINE), 30.0, 'the log line naming the connections closed');
        self::assertStringNotContainsString('Fatal error', $this->server->output());
    }

    private function assertTheWorkerServesOn(int $pid, RawHttp $keepAlive, float $bound = 5.0): void
    {
        $output = $this->server->output();
        self::assertStringNotContainsString('Fatal error', $output);
        $start = \microtime(true);
        $bystander = RawHttp::get($this->server->address(), '/small');
        $seconds = \microtime(true) - $start;
        self::assertSame('ok', $bystander['body']);
        self::assertLessThan($bound, $seconds, 'a bystander waited behind the crowd');
        self::assertSame("hello\n", RawHttp::get($this->server->address(), '/hello.txt')['body']);
        self::assertSame($pid, $this->workerPid(), 'the worker was replaced: ' . $output);
        $keepAlive->send("GET /small HTTP/1.1\r\nHost: t\r\n\r\n");
        self::assertSame('ok', $keepAlive->response()['body'], 'the keep-alive connection opened before the crowd was cut');
    }
}
