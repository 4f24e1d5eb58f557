<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Server;

use PHPUnit\Framework\TestCase;
use Weft\Cli\PhpRuntime;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\ServerProcess;

/**
 * A handler that holds its worker by running (an endless loop, a long C call) is stopped alone: with the
 * extension, --max-request-time interrupts its code; otherwise, or when the interrupt cannot land,
 * --worker-timeout answers every other request in flight before the worker is replaced, and `status`
 * shows the worker as stuck, naming the request. Real servers, real clients, real signals.
 */
final class RunawayCodeTest extends TestCase
{
    private const APP = __DIR__ . '/../fixtures/runaway-code.php';

    /** @var list<string> */
    private array $files = [];

    protected function tearDown(): void
    {
        foreach ($this->files as $file) {
            @\unlink($file);
        }
    }

    public function testWithTheExtensionAnEndlessLoopIsInterruptedAloneAtMaxRequestTime(): void
    {
        self::requireExtension();
        $server = new ServerProcess([self::APP, '--workers', '1', '--max-request-time', '5']);
        $pid = (int) RawHttp::get($server->address(), '/pid')['body'];
        [$spin, $loopStarted, $finally, $othersGo] = [$this->file(), $this->file(), $this->file(), $this->file()];
        $loop = (new RawHttp($server->address(), 30))->send('GET /loop?' . \http_build_query(['started' => $loopStarted, 'until' => $spin, 'mark' => $finally]) . " HTTP/1.1\r\nHost: t\r\n\r\n");
        ServerProcess::waitFor(fn () => \file_exists($loopStarted), 10, 'the looping request to start');
        // The others start well after it, so that they are still within their own --max-request-time
        // when its deadline has passed and they go on (a margin of this pause). The loop, begun after
        // them, then runs at most 1.5 s: with the worker's reports 1 s apart it stays well under the
        // master's 3 s "silent" warning, which this test says must not come.
        \usleep(3_500_000);
        $others = [];
        for ($i = 0; $i < 3; $i++) {
            $started = $this->file();
            $others[$started] = (new RawHttp($server->address(), 30))->send('GET /wait?' . \http_build_query(['started' => $started, 'until' => $othersGo]) . " HTTP/1.1\r\nHost: t\r\n\r\n");
        }
        ServerProcess::waitFor(fn () => \array_filter(\array_keys($others), 'file_exists') === \array_keys($others), 10, 'the others to be in the application');
        \touch($spin); // the loop begins, with three requests in flight on its worker

        $response = $loop->response();
        self::assertSame(504, $response['status'], 'the looping request gets its 504');
        self::assertStringContainsString('the request ran too long', $response['body']);
        self::assertSame('finally ran', @\file_get_contents($finally), 'its finally block ran');
        \touch($othersGo);
        foreach ($others as $client) {
            $answer = $client->response();
            self::assertSame(200, $answer['status'], 'the others in flight on that worker go on');
            self::assertSame('waited', $answer['body']);
        }
        self::assertSame($pid, (int) RawHttp::get($server->address(), '/pid')['body'], 'the worker lives on');
        $log = $server->output();
        self::assertStringContainsString('RequestTimeout: Request (--max-request-time) timed out after 5 s, interrupted while it ran', $log);
        self::assertStringNotContainsString('has been silent', $log);
        $server->stop();
    }

    public function testWithTheExtensionAHandlerThatCatchesTheTimeoutAndLoopsOnGetsItAgain(): void
    {
        self::requireExtension();
        $server = new ServerProcess([self::APP, '--workers', '1', '--max-request-time', '1']);
        $pid = (int) RawHttp::get($server->address(), '/pid')['body'];
        $mark = $this->file();
        $response = (new RawHttp($server->address(), 30))->send('GET /stubborn?' . \http_build_query(['n' => 3, 'mark' => $mark]) . " HTTP/1.1\r\nHost: t\r\n\r\n")->response();
        self::assertSame(504, $response['status']);
        self::assertSame('caught 3 times: Weft\Server\RequestTimeout', @\file_get_contents($mark), 're-raised at every tick until it gave up');
        self::assertSame($pid, (int) RawHttp::get($server->address(), '/pid')['body']);
        $server->stop();
    }

    public function testWithTheExtensionAHandlerThatNeverGivesUpFallsBackToTheWorkerTimeout(): void
    {
        self::requireExtension();
        $server = new ServerProcess([self::APP, '--workers', '1', '--max-request-time', '1', '--worker-timeout', '3']);
        $pid = (int) RawHttp::get($server->address(), '/pid')['body'];
        [$go, $started] = [$this->file(), $this->file()];
        $other = (new RawHttp($server->address(), 30))->send('GET /wait?' . \http_build_query(['until' => $go]) . " HTTP/1.1\r\nHost: t\r\n\r\n");
        $stubborn = (new RawHttp($server->address(), 30))->send('GET /stubborn?' . \http_build_query(['started' => $started]) . " HTTP/1.1\r\nHost: t\r\n\r\n");
        $response = $stubborn->response();
        // PHP's handler answers the culprit 500; when it cannot run within its grace (a loaded machine),
        // the extension's thread answers every request 503 itself (docs/architecture.md): a failure, never an empty reply.
        self::assertContains($response['status'], [500, 503], 'it catches every interrupt: --worker-timeout ends it');
        $answer = $other->response();
        self::assertSame(503, $answer['status'], 'the other request in flight is answered before the worker goes');
        self::assertSame('close', $answer['headers']['connection']);
        self::assertTrue($other->isClosedByPeer());
        $this->assertReplaced($server, $pid);
        // Each path names what happened: PHP's handler the request it was stuck in, the extension's
        // thread (it answered for PHP) the requests it answered.
        self::assertMatchesRegularExpression($response['status'] === 500
            ? '~Stuck in GET /stubborn\\?started=\\S+ over --worker-timeout: 1 other request\\(s\\) in flight answered 503~'
            : '~stuck in a call that PHP cannot interrupt, over --worker-timeout: 2 request\\(s\\) in flight answered 503~', $server->output());
        $server->stop();
    }

    public function testWithTheExtensionALongCCallIsAnsweredAtTheWorkerTimeoutAndShownAsStuck(): void
    {
        self::requireExtension();
        $server = new ServerProcess([self::APP, '--workers', '1', '--worker-timeout', '5']);
        $pid = (int) RawHttp::get($server->address(), '/pid')['body'];
        $lockFile = $this->file();
        $lock = \fopen($lockFile, 'c');
        self::assertTrue(\flock($lock, \LOCK_EX));
        try {
            $others = [];
            for ($i = 0; $i < 2; $i++) {
                $others[] = (new RawHttp($server->address(), 30))->send("GET /slow?s=60&n=$i HTTP/1.1\r\nHost: t\r\n\r\n");
            }
            ServerProcess::waitFor(fn () => \count($server->status()['workers'][0]['running'] ?? []) === 2 ?: null, 10, 'two requests running');
            $stuck = (new RawHttp($server->address(), 30))->send('GET /lock?' . \http_build_query(['file' => $lockFile]) . " HTTP/1.1\r\nHost: t\r\n\r\n");

            $worker = ServerProcess::waitFor(fn () => ($w = $server->status()['workers'][0] ?? null) !== null && $w['state'] === 'stuck' ? $w : null, 10, 'status to show the worker stuck');
            self::assertSame($pid, $worker['pid']);
            self::assertSame('GET /lock?file=' . \rawurlencode($lockFile), $worker['stuck']['request']);
            foreach ($others as $client) {
                $answer = $client->response();
                self::assertSame(503, $answer['status'], 'answered by the extension: PHP cannot run in the C call');
                self::assertSame('close', $answer['headers']['connection']);
                self::assertTrue($client->isClosedByPeer());
            }
            self::assertSame(503, $stuck->response()['status']);
            $this->assertReplaced($server, $pid);
            self::assertStringContainsString('stuck in a call that PHP cannot interrupt, over --worker-timeout: 3 request(s) in flight answered 503', $server->output());
        } finally {
            \flock($lock, \LOCK_UN);
            \fclose($lock);
        }
        $server->stop();
    }

    public function testWithoutTheExtensionAStuckWorkerIsShownStuckAndAnswersItsOtherRequests(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--worker-timeout', '5'], ['WEFT_NO_REEXEC' => '1']);
        self::assertStringContainsString('The weft extension is not loaded', $server->output());
        $pid = (int) RawHttp::get($server->address(), '/pid')['body'];
        [$spin, $loopStarted] = [$this->file(), $this->file()];
        // The loop starts first and the others after it, so only the worker itself can tell which
        // request's code holds it (its scoreboard names the request it started last).
        $loop = (new RawHttp($server->address(), 30))->send('GET /loop?' . \http_build_query(['started' => $loopStarted, 'until' => $spin]) . " HTTP/1.1\r\nHost: t\r\n\r\n");
        ServerProcess::waitFor(fn () => \file_exists($loopStarted), 10, 'the looping request to start');
        $others = [];
        for ($i = 0; $i < 3; $i++) {
            $started = $this->file();
            $others[$started] = (new RawHttp($server->address(), 30))->send('GET /slow?' . \http_build_query(['s' => 60, 'started' => $started]) . " HTTP/1.1\r\nHost: t\r\n\r\n");
        }
        ServerProcess::waitFor(fn () => \array_filter(\array_keys($others), 'file_exists') === \array_keys($others), 10, 'the others to be in the application');
        \touch($spin);

        $loopTarget = 'GET /loop?' . \http_build_query(['started' => $loopStarted, 'until' => $spin]);
        $worker = ServerProcess::waitFor(fn () => ($w = $server->status()['workers'][0] ?? null) !== null && $w['state'] === 'stuck' ? $w : null, 10, 'status to show the worker stuck');
        self::assertSame($pid, $worker['pid']);
        self::assertSame($loopTarget, $worker['stuck']['request']);
        [, $text] = $server->control('status');
        self::assertStringContainsString("worker 1 is stuck in $loopTarget (silent for", $text);

        self::assertSame(500, $loop->response()['status'], 'the looping request fails');
        foreach ($others as $client) {
            $answer = $client->response();
            self::assertSame(503, $answer['status'], 'the others get a 503, not an empty reply');
            self::assertSame('close', $answer['headers']['connection']);
            self::assertTrue($client->isClosedByPeer());
        }
        $this->assertReplaced($server, $pid);
        self::assertStringContainsString("Stuck in $loopTarget over --worker-timeout: 3 other request(s) in flight answered 503", $server->output());
        $server->stop();
    }

    private function assertReplaced(ServerProcess $server, int $pid): void
    {
        $newPid = ServerProcess::waitFor(function () use ($server) {
            try {
                return (int) RawHttp::get($server->address(), '/pid')['body'];
            } catch (\RuntimeException) {
                return null;
            }
        }, 20, 'a new worker');
        self::assertNotSame($pid, $newPid);
    }

    private function file(): string
    {
        return $this->files[] = \sys_get_temp_dir() . '/weft-runaway-' . \bin2hex(\random_bytes(6));
    }

    private static function requireExtension(): void
    {
        if (PhpRuntime::builtExtension() === null) {
            self::markTestSkipped('the native extension is not built (bash scripts/build-ext.sh)');
        }
        if (\getenv('WEFT_NO_REEXEC') !== false) {
            self::markTestSkipped('WEFT_NO_REEXEC: bin/weft does not load the built extension');
        }
    }
}
