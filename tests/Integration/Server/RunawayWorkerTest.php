<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Server;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\ServerProcess;

/** A runaway or stuck handler cannot take a worker down silently: real servers, real signals. */
final class RunawayWorkerTest extends TestCase
{
    private const APP = __DIR__ . '/../fixtures/hardening.php';

    public function testARunawayRequestHitsTheMemoryLimitAndTheWorkerIsReplaced(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--memory-limit', '48M']);
        $pid = (int) RawHttp::get($server->address(), '/pid')['body'];
        $client = new RawHttp($server->address());
        $client->send("GET /grow?tag=runaway HTTP/1.1\r\nHost: t\r\n\r\n");
        self::assertSame(500, $client->response()['status'], 'the runaway request fails');
        self::assertTrue($client->isClosedByPeer(20), 'the runaway request ends with its worker');
        $log = ServerProcess::waitFor(fn () => \str_contains($out = $server->output(), 'exited with code 255') ? $out : null, 15, 'the worker to be replaced');
        self::assertStringContainsString('Allowed memory size of 50331648 bytes exhausted', $log);
        self::assertStringContainsString('(--memory-limit 48M) while running GET /grow?tag=runaway', $log);
        $newPid = ServerProcess::waitFor(function () use ($server) {
            try {
                return (int) RawHttp::get($server->address(), '/pid')['body'];
            } catch (\RuntimeException) {
                return null;
            }
        }, 15, 'a new worker');
        self::assertNotSame($pid, $newPid);
        self::assertSame('ok', RawHttp::get($server->address())['body']);
        $server->stop();
    }

    public function testTheOtherRequestsOfAWorkerThatHitsTheMemoryLimitGetAnAnswer(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--memory-limit', '48M']);
        $pid = (int) RawHttp::get($server->address(), '/pid')['body'];
        $others = [];
        for ($i = 0; $i < 3; $i++) {
            $others[] = (new RawHttp($server->address()))->send("GET /slow?s=30&n=$i HTTP/1.1\r\nHost: t\r\n\r\n");
        }
        // All three are in the application before the runaway starts.
        ServerProcess::waitFor(fn () => \count($server->status()['workers'][0]['running'] ?? []) === 3 ?: null, 15, 'three requests running');
        $runaway = (new RawHttp($server->address()))->send("GET /grow?tag=runaway HTTP/1.1\r\nHost: t\r\n\r\n")->response();
        self::assertSame(500, $runaway['status'], 'the request that hit the limit fails with a 500, not an empty reply');
        foreach ($others as $client) {
            $response = $client->response();
            self::assertSame(503, $response['status'], 'the others get a 503, not an empty reply');
            self::assertSame('close', $response['headers']['connection']);
            self::assertTrue($client->isClosedByPeer());
        }
        $log = ServerProcess::waitFor(fn () => \str_contains($out = $server->output(), 'exited with code 255') ? $out : null, 15, 'the worker to be replaced');
        self::assertStringContainsString('(--memory-limit 48M) while running GET /grow?tag=runaway, GET /slow', $log);
        $newPid = ServerProcess::waitFor(function () use ($server) {
            try {
                return (int) RawHttp::get($server->address(), '/pid')['body'];
            } catch (\RuntimeException) {
                return null;
            }
        }, 15, 'a new worker');
        self::assertNotSame($pid, $newPid);
        $server->stop();
    }

    public function testExitWithoutTheExitHookStillAnswersTheWorkersRequests(): void
    {
        // Without the exit hook (--hooks none here; also sync mode, or no native extension), exit()
        // ends the worker: the request calling it gets a 500 and the others in flight a 503.
        $server = new ServerProcess([self::APP, '--workers', '1', '--hooks', 'none']);
        $others = [];
        for ($i = 0; $i < 2; $i++) {
            $others[] = (new RawHttp($server->address()))->send("GET /slow?s=30&n=$i HTTP/1.1
Host: t

");
        }
        ServerProcess::waitFor(fn () => \count($server->status()['workers'][0]['running'] ?? []) === 2 ?: null, 15, 'two requests running');
        $exiting = (new RawHttp($server->address()))->send("GET /exit?tag=bye HTTP/1.1
Host: t

");
        self::assertSame(500, $exiting->response()['status']);
        foreach ($others as $client) {
            $response = $client->response();
            self::assertSame(503, $response['status']);
            self::assertSame('close', $response['headers']['connection']);
        }
        $log = ServerProcess::waitFor(fn () => \str_contains($out = $server->output(), 'exited with code 3') ? $out : null, 15, 'the worker to be replaced');
        self::assertStringContainsString('exit() in GET /exit?tag=bye ends the worker, which is replaced; 2 other request(s) in flight get a 503', $log);
        $server->stop();

        // Sync mode never hooks exit(): its request is answered and named too.
        $server = new ServerProcess([self::APP, '--workers', '1', '--mode', 'sync']);
        self::assertSame(500, RawHttp::get($server->address(), '/exit?tag=sync')['status']);
        $log = ServerProcess::waitFor(fn () => \str_contains($out = $server->output(), 'exited with code 3') ? $out : null, 15, 'the worker to be replaced');
        self::assertStringContainsString('exit() in GET /exit?tag=sync ends the worker', $log);
        ServerProcess::waitFor(function () use ($server) {
            try {
                return RawHttp::get($server->address())['body'] === 'ok' ?: null;
            } catch (\RuntimeException) {
                return null;
            }
        }, 20, 'a new worker');
        $server->stop();
    }

    public function testTheDefaultMemoryLimitIsFpmsNotUnlimited(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1']);
        $client = new RawHttp($server->address());
        $client->send("GET /grow HTTP/1.1\r\nHost: t\r\n\r\n");
        self::assertSame(500, $client->response()['status']);
        self::assertTrue($client->isClosedByPeer(30));
        $log = ServerProcess::waitFor(fn () => \str_contains($out = $server->output(), 'exited with code 255') ? $out : null, 15, 'the worker to be replaced');
        self::assertStringContainsString('Allowed memory size of 134217728 bytes exhausted', $log);
        $server->stop();
    }

    public function testAStoppedWorkerIsKilledAndReplacedAfterTheWorkerTimeout(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '2', '--worker-timeout', '2']);
        $before = ServerProcess::waitFor(fn () => \count($p = $server->workerPids()) === 2 ? $p : null, 15, 'two workers');
        \posix_kill($before[0], \SIGSTOP);
        try {
            $log = ServerProcess::waitFor(fn () => \str_contains($out = $server->output(), "(pid {$before[0]}) has been silent") ? $out : null, 20, 'the liveness check');
            self::assertStringContainsString('while running no request: killing it', $log);
            $after = ServerProcess::waitFor(function () use ($server, $before) {
                $pids = $server->workerPids();
                return \count($pids) === 2 && !\in_array($before[0], $pids, true) ? $pids : null;
            }, 20, 'a replacement');
            self::assertContains($before[1], $after, 'the healthy worker was left alone');
            self::assertSame(200, RawHttp::get($server->address())['status']);
            self::assertFalse(\file_exists("/proc/{$before[0]}/status") && !\str_contains((string) @\file_get_contents("/proc/{$before[0]}/status"), 'zombie'));
        } finally {
            @\posix_kill($before[0], \SIGKILL);
        }
        $server->stop();
    }

    public function testAWorkerStuckInAnEndlessLoopIsReplacedAndTheLogNamesTheRequest(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--worker-timeout', '2']);
        $pid = (int) RawHttp::get($server->address(), '/pid')['body'];
        // Let a stats message carry the request: the worker reports every second.
        $client = new RawHttp($server->address());
        $client->send("GET /spin?job=42&after=1.5 HTTP/1.1\r\nHost: t\r\n\r\n");
        $log = ServerProcess::waitFor(fn () => \str_contains($out = $server->output(), "(pid $pid) has been silent") ? $out : null, 20, 'the liveness check');
        self::assertMatchesRegularExpression('~while running GET /spin\?job=42&after=1\.5 \(for \d+\.\d s\): killing it~', $log);
        // PHP's handler answers the culprit 500; when it cannot run within its grace (a loaded machine),
        // the extension's thread answers every request 503 itself (docs/architecture.md): a failure, never an empty reply.
        self::assertContains($client->response()['status'], [500, 503], 'its last words: the request that held it fails, not an empty reply');
        self::assertTrue($client->isClosedByPeer(10));
        $newPid = ServerProcess::waitFor(function () use ($server) {
            try {
                return (int) RawHttp::get($server->address(), '/pid')['body'];
            } catch (\RuntimeException) {
                return null;
            }
        }, 20, 'a new worker');
        self::assertNotSame($pid, $newPid);
        self::assertStringContainsString('over --worker-timeout', $server->output());
        $server->stop();
    }

    public function testAWorkerStuckTheInstantARequestStartsIsNamedToo(): void
    {
        foreach (['coroutine', 'sync'] as $mode) {
            $server = new ServerProcess([self::APP, '--workers', '1', '--worker-timeout', '2', '--mode', $mode]);
            $pid = (int) RawHttp::get($server->address(), '/pid')['body'];
            // An endless loop from its first line: the worker never reports again after it starts.
            $client = new RawHttp($server->address());
            $client->send("GET /spin?job=at-once-$mode HTTP/1.1\r\nHost: t\r\n\r\n");
            $log = ServerProcess::waitFor(fn () => \str_contains($out = $server->output(), "(pid $pid) has been silent") ? $out : null, 20, 'the liveness check');
            self::assertStringContainsString("while running GET /spin?job=at-once-$mode", $log, $mode);
            self::assertStringNotContainsString('while running no request', $log, $mode);
            self::assertContains($client->response()['status'], [500, 503], $mode); // as above: 503 when PHP's handler could not run in time
            self::assertTrue($client->isClosedByPeer(10));
            ServerProcess::waitFor(function () use ($server) {
                try {
                    return RawHttp::get($server->address())['body'] === 'ok' ?: null;
                } catch (\RuntimeException) {
                    return null;
                }
            }, 20, 'a new worker');
            $server->stop();
        }
    }

    public function testAMasterThatWasHeldUpDoesNotKillItsHealthyWorkers(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '2', '--worker-timeout', '2']);
        $before = ServerProcess::waitFor(fn () => \count($p = $server->workerPids()) === 2 ? $p : null, 15, 'two workers');
        \posix_kill($server->masterPid(), \SIGSTOP);
        \usleep(4_000_000); // twice the worker timeout, while the workers report into their channels
        \posix_kill($server->masterPid(), \SIGCONT);
        self::assertSame($before, ServerProcess::waitFor(fn () => $server->workerPids(), 10, 'the master to answer'));
        \usleep(2_500_000); // a few liveness rounds after the resume
        self::assertSame($before, $server->workerPids());
        self::assertStringNotContainsString('has been silent', $server->output());
        $server->stop();
    }

    public function testStatusShowsTheRequestsAWorkerIsRunning(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1']);
        $client = new RawHttp($server->address());
        $client->send("GET /slow?s=4&tag=watched HTTP/1.1\r\nHost: t\r\n\r\n");
        $shown = ServerProcess::waitFor(function () use ($server) {
            [$code, $out] = $server->control('status');
            return $code === 0 && \str_contains($out, 'runs GET /slow?s=4&tag=watched for') ? $out : null;
        }, 10, 'status to show the running request');
        self::assertMatchesRegularExpression('~worker 1 runs GET /slow\?s=4&tag=watched for \d+\.\d s~', $shown);
        $running = $server->status()['workers'][0]['running'];
        self::assertSame('GET /slow?s=4&tag=watched', $running[0]['request']);
        self::assertIsFloat($running[0]['since']);
        self::assertSame('slow done', $client->response()['body']);
        $server->stop();
    }

    public function testAStopDoesNotShortenTheAppsOwnSleepInSyncMode(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--mode', 'sync']);
        $client = new RawHttp($server->address(), 20);
        $mark = \sys_get_temp_dir() . '/weft-sleep-' . \bin2hex(\random_bytes(4));
        $client->send("GET /native-sleep?s=2&mark=" . \rawurlencode($mark) . " HTTP/1.1\r\nHost: t\r\n\r\n");
        ServerProcess::waitFor(fn () => \file_exists($mark), 15, 'the handler to start sleeping');
        \unlink($mark);
        \usleep(200_000);
        \posix_kill($server->masterPid(), \SIGTERM);
        $response = $client->response();
        self::assertSame(200, $response['status']);
        [$slept, $total] = \array_map('floatval', \explode(' ', $response['body']));
        self::assertGreaterThanOrEqual(1.99, $slept, 'usleep(2 s) ran its full length');
        self::assertGreaterThanOrEqual(2.99, $total, 'and sleep(1) after it too');
        ServerProcess::waitFor(fn () => !$server->isRunning(), 15, 'the master to exit');
    }
}
