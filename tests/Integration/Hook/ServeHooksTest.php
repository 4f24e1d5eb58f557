<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Hook;

use PHPUnit\Framework\TestCase;
use Weft\Hook\Hooks;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\ServerProcess;

/**
 * `bin/weft serve --hooks ...` with an application written with ordinary blocking calls, one worker:
 * with the hooks, a request that waits does not hold up the next one.
 */
final class ServeHooksTest extends TestCase
{
    private const APP = __DIR__ . '/fixtures/blocking-app.php';

    protected function setUp(): void
    {
        if (!Hooks::isSupported()) {
            self::markTestSkipped('the weft extension is not built (bash scripts/build-ext.sh)');
        }
    }

    public function testByDefaultABlockingCallOnlyHoldsItsOwnRequest(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1']);
        try {
            self::assertSame(['fast', 'slow'], self::race($server, '/usleep?ms=1500'));
            self::assertSame(['fast', 'slow'], self::race($server, '/pdo?sleep=1.5'));
            // Every kind this build can hook (curl too when PHP's curl extension is loaded).
            $expected = Hooks::describe(Hooks::available());
            $status = $server->status();
            self::assertSame($expected, $status['workers'][0]['hooks']);
            [, $text] = $server->control('status');
            self::assertStringContainsString("Hooks: $expected", $text);
        } finally {
            $server->stop();
        }
        self::assertMatchesRegularExpression('/Hooks on: ' . \preg_quote($expected, '/') . ' .*not hooked: /', $server->output());
    }

    public function testWithHooksNoneTheWorkerBlocks(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--hooks', 'none']);
        try {
            self::assertSame(['slow', 'fast'], self::race($server, '/usleep?ms=800'));
            self::assertSame('none', $server->status()['workers'][0]['hooks']);
        } finally {
            $server->stop();
        }
        self::assertStringContainsString('Hooks off (--hooks none)', $server->output());
    }

    public function testAListOfKindsAndSyncMode(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--hooks', 'sleep']);
        try {
            self::assertSame('sleep', $server->status()['workers'][0]['hooks']);
            self::assertSame(['fast', 'slow'], self::race($server, '/usleep?ms=1500'));
        } finally {
            $server->stop();
        }
        $sync = new ServerProcess([self::APP, '--workers', '1', '--mode', 'sync']);
        try {
            self::assertSame('none', $sync->status()['workers'][0]['hooks']);
            self::assertSame('slept', RawHttp::get($sync->address(), '/usleep?ms=10')['body']);
        } finally {
            $sync->stop();
        }
    }

    public function testExitInARequestAnswers500AndLeavesTheWorkerAndItsOtherRequests(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1']);
        try {
            $pid = RawHttp::get($server->address(), '/pid')['body'];
            $mark = \sys_get_temp_dir() . '/weft-mark-' . \bin2hex(\random_bytes(6));
            $inFlight = (new RawHttp($server->address(), 30))->send("GET /usleep?ms=800&mark={$mark} HTTP/1.1\r\nHost: t\r\n\r\n");
            ServerProcess::waitFor(static fn (): bool => \is_file($mark), 15.0, 'the request to reach the application');
            \unlink($mark);
            self::assertSame(500, RawHttp::get($server->address(), '/exit')['status']);
            self::assertSame('slept', $inFlight->response()['body']);
            self::assertSame($pid, RawHttp::get($server->address(), '/pid')['body']);
            $worker = $server->status()['workers'][0];
            self::assertStringContainsString('exit', $worker['hooks']);
            if (\extension_loaded('Zend OPcache') && \function_exists('opcache_get_status')) {
                // The exit hook is a user opcode handler for ZEND_EXIT, which the JIT accepts.
                self::assertTrue($worker['jit'], 'the JIT stays on with the exit hook');
            }
        } finally {
            $server->stop();
        }
        self::assertStringContainsString('exit() was called inside a coroutine with "bye"', $server->output());
    }

    /** @return iterable<string, array{string}> */
    public static function poolSizes(): iterable
    {
        yield 'a connection each' => ['16'];
        yield 'requests wait for one of two' => ['2'];
    }

    #[\PHPUnit\Framework\Attributes\DataProvider('poolSizes')]
    public function testTheSql3PdoExampleAnswersConcurrentRequests(string $poolSize): void
    {
        $server = new ServerProcess([\dirname(__DIR__, 3) . '/examples/sql3-pdo.php', '--workers', '1'], ['DB_POOL' => $poolSize]);
        try {
            $clients = [];
            for ($i = 0; $i < 8; $i++) {
                $clients[] = (new RawHttp($server->address(), 30))->send("GET / HTTP/1.1\r\nHost: t\r\n\r\n");
            }
            foreach ($clients as $client) {
                $response = $client->response();
                self::assertSame(200, $response['status'], $response['body']);
                $rows = \json_decode($response['body'], true, 512, \JSON_THROW_ON_ERROR);
                self::assertCount(5, $rows);
                self::assertSame(['id' => 1, 'name' => 'name-1'], $rows[0]);
            }
        } finally {
            $server->stop();
        }
    }

    public function testTheDetectorNamesTheRequestAndTheCallThatHeldTheWorker(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--hooks', 'none', '--blocking-threshold', '0.05']);
        try {
            self::assertSame('slept', RawHttp::get($server->address(), '/usleep?ms=300')['body']);
            self::assertSame('spun', RawHttp::get($server->address(), '/spin?ms=300')['body']);
            ServerProcess::waitFor(
                static fn (): bool => \str_contains($server->output(), 'A blocking call held the worker'),
                10.0,
                'a blocking report in the log',
            );
            // The busy loop may run JIT-compiled without an interrupt check: its lag is measured anyway.
            $worker = ServerProcess::waitFor(static function () use ($server): ?array {
                $worker = $server->status()['workers'][0];
                return ($worker['blocked'] ?? 0) >= 1 && ($worker['lag_max_ms'] ?? 0) >= 250.0 ? $worker : null;
            }, 10.0, 'the worker to report what held it');
            self::assertGreaterThanOrEqual(250.0, $worker['lag_max_ms']);
            [, $text] = $server->control('status');
            self::assertStringContainsString('Loop lag (last interval): worker 1:', $text);
        } finally {
            $server->stop();
        }
        $log = $server->output();
        self::assertMatchesRegularExpression('/held the worker for \d+ ms \(threshold 50 ms\) in GET \/usleep: usleep\(\) at \S+blocking-app\.php:\d+/', $log);
    }

    /**
     * The query waits in the worker's idle poll (no other request: the hook polls its descriptor and the
     * loop's in C). A stop then (SIGTERM to the master, which stops its worker) loses nothing: the request
     * in flight gets its answer and the server exits cleanly, well within the grace period.
     */
    public function testAStopWhileAHookedQueryWaitsLetsTheRequestFinish(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1']);
        $mark = \sys_get_temp_dir() . '/weft-mark-' . \bin2hex(\random_bytes(6));
        try {
            $slow = (new RawHttp($server->address(), 30))->send("GET /pdo?sleep=1.5&mark={$mark} HTTP/1.1\r\nHost: t\r\n\r\n");
            ServerProcess::waitFor(static fn (): bool => \is_file($mark), 15.0, 'the request to reach the application');
            \usleep(200_000); // into the query's wait
            \posix_kill($server->masterPid(), \SIGTERM);
            $response = $slow->response();
            self::assertSame(200, $response['status'], $server->output());
            self::assertSame('0', $response['body']);
            ServerProcess::waitFor(static fn (): bool => !$server->isRunning(), 8.0, 'the server to exit');
            self::assertStringContainsString('exited with code 0', $server->output());
            self::assertStringNotContainsString('Grace period over', $server->output());
        } finally {
            @\unlink($mark);
            $server->stop();
        }
    }

    public function testAnUnknownKindIsAUsageError(): void
    {
        [$code, $output] = ServerProcess::cli(['serve', self::APP, '--hooks', 'stream,files']);
        self::assertNotSame(0, $code);
        self::assertStringContainsString("option '--hooks': Unknown hook \"files\"", $output);
    }

    /**
     * Sends a slow request, then a fast one on another connection, and returns which answered first.
     *
     * @return list<string>
     */
    private static function race(ServerProcess $server, string $slowTarget): array
    {
        $mark = \sys_get_temp_dir() . '/weft-mark-' . \bin2hex(\random_bytes(6));
        $slow = (new RawHttp($server->address(), 30))->send("GET {$slowTarget}&mark={$mark} HTTP/1.1\r\nHost: t\r\n\r\n");
        // The slow request must be in the application before the fast one arrives.
        ServerProcess::waitFor(static fn (): bool => \is_file($mark), 15.0, 'the slow request to reach the application');
        \unlink($mark);
        $fast = (new RawHttp($server->address(), 30))->send("GET /fast HTTP/1.1\r\nHost: t\r\n\r\n");
        $order = [];
        $pending = ['slow' => $slow, 'fast' => $fast];
        while ($pending !== []) {
            $read = \array_map(static fn (RawHttp $c) => $c->socket, $pending);
            $write = $except = null;
            if (\stream_select($read, $write, $except, 30) < 1) {
                throw new \RuntimeException('no answer within 30 s');
            }
            foreach ($pending as $name => $client) {
                if (\in_array($client->socket, $read, true)) {
                    $response = $client->response();
                    self::assertSame(200, $response['status'], "$name: {$response['body']}\n" . $server->output());
                    $order[] = $name;
                    unset($pending[$name]);
                }
            }
        }
        return $order;
    }
}
