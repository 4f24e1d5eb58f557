<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\WebSocket;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\RawWebSocket;
use Weft\Tests\Support\WebSocketCrowd;
use Weft\Tests\Support\ServerProcess;
use Weft\WebSocket\Upgrade;

/**
 * Idle WebSockets are bounded by the worker's memory, not only by --max-connections: a crowd of real
 * clients (Python's `websockets`) beyond the budget meets 503s at the handshake while the worker lives
 * on and every accepted connection keeps working and gets its close frame. (Before, ~23 KB per idle
 * closure-form connection of examples/websocket-echo.php took a 128M worker to its memory limit at
 * ~5,500 connections, and it died with all of them, without a close frame.) The example now uses the
 * event form, and an idle connection of it holds about what an idle HTTP keep-alive connection does.
 * Workers here have a small --memory-limit to keep the crowds small; the budget is half of it less
 * what the loaded application holds.
 */
final class WebSocketMemoryTest extends TestCase
{
    private const PYTHON = '/usr/bin/python3';
    private const EXAMPLE = __DIR__ . '/../../../examples/websocket-echo.php';
    private const APP = __DIR__ . '/fixtures/idle.php';
    /** The example, and GET /memory. */
    private const EXAMPLE_MEMORY = __DIR__ . '/fixtures/echo-example.php';

    protected function setUp(): void
    {
        if (\shell_exec(self::PYTHON . ' -c "import websockets" 2>&1') !== null) {
            self::markTestSkipped('python3-websockets is not installed (scripts/setup.sh installs it)');
        }
    }

    public function testACrowdBeyondTheBudgetOfTheEchoExampleIsRefusedAndTheWorkerLives(): void
    {
        // A budget of 6M less the application: about 950 of the example's event-form WebSockets.
        $server = new ServerProcess([self::EXAMPLE, '--workers', '1', '--memory-limit', '12M']);
        $worker = $server->workerPids();
        $crowd = new WebSocketCrowd("ws://{$server->address()}/", 1200);
        $opened = $crowd->opened;
        $open = $opened['open'];
        self::assertSame([], $opened['errors'], 'every handshake is answered, 101 or 503: none is dropped');
        self::assertSame(['503' => 1200 - $open], $opened['refused']);
        self::assertGreaterThan(500, $open);
        [$count, $budget] = self::refusalLine($server);
        self::assertSame($open, $count, 'the log line counts the open WebSockets');
        self::assertLessThanOrEqual($budget, $open * Upgrade::COST_EVENT, 'the example is charged the event form');
        self::assertGreaterThan($budget, ($open + 1) * Upgrade::COST_EVENT, 'refused only once the next one did not fit');
        self::assertSame(['echoed' => $open, 'failed' => 0], $crowd->command('echo'));
        self::assertSame($worker, $server->workerPids(), 'the worker did not die');
        self::assertStringNotContainsString('Allowed memory size', $server->output());

        $server->control('stop', ['--timeout', '20']);
        self::assertSame(['close_codes' => ['1001' => $open]], $crowd->command('wait'), 'every connection gets a close frame');
        $crowd->end();
        $server->stop();
    }

    public function testAnIdleWebSocketOfTheEchoExampleHoldsWhatAnEventFormOneIsCharged(): void
    {
        $server = new ServerProcess([self::EXAMPLE_MEMORY, '--workers', '1', '--ws-memory', '0']);
        $http = new RawHttp($server->address());
        $before = self::memory($http);
        // One handshake at a time: a burst's handshakes would leave Fibers in the worker's pool.
        $crowd = new WebSocketCrowd("ws://{$server->address()}/", 1000, 1);
        self::assertSame(['refused' => [], 'errors' => [], 'open' => 1000], $crowd->opened);
        self::assertSame(['echoed' => 1000, 'failed' => 0], $crowd->command('echo'));
        $after = self::memory($http);
        self::assertSame($before['pid'], $after['pid']);
        // About 4.6 KB each with the headers Python's client sends (23 KB when the example was a
        // receive() loop: its coroutine's Fiber stayed for the connection's whole life).
        $each = ($after['memory'] - $before['memory']) / 1000;
        self::assertLessThanOrEqual(Upgrade::COST_EVENT, $each, \sprintf('an idle WebSocket of the example holds %.0f bytes', $each));
        $crowd->end();
        $server->stop();
    }

    public function testIdleWebSocketsHoldNoMoreThanTheyAreCharged(): void
    {
        // No budget here (--ws-memory 0): refused handshakes would leave the worker's tables of
        // connections, watchers and timers larger than the open connections need, which is not what an
        // idle WebSocket costs (the charges leave room for it).
        $server = new ServerProcess([self::APP, '--workers', '1', '--ws-memory', '0']);
        $http = new RawHttp($server->address());
        $before = self::memory($http);
        // One handshake at a time: a burst's handshakes would leave Fibers in the worker's pool.
        $events = new WebSocketCrowd("ws://{$server->address()}/event", 1000, 1);
        self::assertSame(['refused' => [], 'errors' => [], 'open' => 1000], $events->opened);
        self::assertSame(['echoed' => 1000, 'failed' => 0], $events->command('echo'));
        $middle = self::memory($http);
        $closures = new WebSocketCrowd("ws://{$server->address()}/closure", 200, 1);
        self::assertSame(['refused' => [], 'errors' => [], 'open' => 200], $closures->opened);
        self::assertSame(['echoed' => 200, 'failed' => 0], $closures->command('echo'));
        $after = self::memory($http);
        self::assertSame($before['pid'], $after['pid']);

        // In all (those tables, which grow by doubling, included: a figure per form would depend on
        // where a doubling falls), what they hold is covered by what they are charged.
        $charged = 1000 * Upgrade::COST_EVENT + 200 * Upgrade::COST_CLOSURE;
        $held = $after['memory'] - $before['memory'];
        self::assertLessThanOrEqual($charged, $held, \sprintf(
            'the WebSockets hold %d bytes, more than the %d they are charged (event form: %.0f bytes each, closure form: %.0f)',
            $held, $charged, ($middle['memory'] - $before['memory']) / 1000, ($after['memory'] - $middle['memory']) / 200,
        ));
        // And an event-form one holds about what an idle HTTP keep-alive connection does (4 KB), far
        // less than a closure-form one with its Fiber.
        self::assertLessThan(Upgrade::COST_EVENT, ($middle['memory'] - $before['memory']) / 1000);
        $closures->end();
        $events->end();
        $server->stop();
    }

    /** @return iterable<string, array{string}> */
    public static function loops(): iterable
    {
        yield 'epoll' => ['epoll'];
        yield 'select' => ['select'];
    }

    #[\PHPUnit\Framework\Attributes\DataProvider('loops')]
    public function testWsMemoryBoundsBothFormsAndAClosedWebSocketGivesItsShareBack(string $loop): void
    {
        // 56 KB: two closure-form WebSockets (25 KB each) and one event-form one (5 KB).
        $server = new ServerProcess([self::APP, '--workers', '1', '--ws-memory', '56K', '--loop', $loop]);
        $address = $server->address();
        $closures = [new RawWebSocket($address, '/closure'), new RawWebSocket($address, '/closure')];
        self::assertSame([101, 101], [$closures[0]->status(), $closures[1]->status()]);
        $refused = new RawWebSocket($address, '/closure');
        self::assertSame(503, $refused->status());
        self::assertMatchesRegularExpression('/\r\nConnection: close(\r\n|$)/i', $refused->responseHead);
        self::assertMatchesRegularExpression('/\r\nRetry-After: 1(\r\n|$)/i', $refused->responseHead);
        $event = new RawWebSocket($address, '/event');
        self::assertSame(101, $event->status(), 'a smaller event-form one still fits');
        self::assertSame(503, (new RawWebSocket($address, '/event'))->status());
        self::assertStringContainsString('upgrade refused (503)', $server->output());

        $closures[0]->close();
        $events = [ServerProcess::waitFor(static function () use ($address): ?RawWebSocket {
            $ws = new RawWebSocket($address, '/event');
            return $ws->status() === 101 ? $ws : null;
        }, 10, 'the share of the closed WebSocket to come back')];
        while (\count($events) < 20 && ($ws = new RawWebSocket($address, '/event'))->status() === 101) {
            $events[] = $ws;
        }
        // 56 KB less the closure (25 KB) and the first event-form one: five more of 5 KB.
        self::assertCount(5, $events);
        $closures[1]->sendText('still here');
        self::assertSame('still here', $closures[1]->read()[1] ?? null);
        $events[4]->sendText('me too');
        self::assertSame('me too', $events[4]->read()[1] ?? null);
        $server->stop();
    }

    public function testAClientThatLeavesDuringTheHandshakeIsNotCharged(): void
    {
        // Room for one closure-form WebSocket: a charge left behind would refuse the next one.
        $server = new ServerProcess([self::APP, '--workers', '1', '--ws-memory', '25K', '--access-log', '-']);
        $address = $server->address();
        $key = \base64_encode(\random_bytes(16));
        $handshake = "GET /slow HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: $key\r\nSec-WebSocket-Version: 13\r\n\r\n";
        $leaving = \stream_socket_client("tcp://$address");
        \fwrite($leaving, $handshake);
        \fclose($leaving); // before the application answers
        $reset = \socket_import_stream(\stream_socket_client("tcp://$address"));
        \socket_write($reset, $handshake);
        \socket_set_option($reset, \SOL_SOCKET, \SO_LINGER, ['l_onoff' => 1, 'l_linger' => 0]);
        \socket_close($reset); // a reset rather than a FIN
        // Each is switched (its access log line is written just before) after it has gone.
        ServerProcess::waitFor(static fn (): bool => \substr_count($server->output(), '"GET /slow HTTP/1.1" 101') === 2, 10, 'the two handshakes answered');
        $ws = new RawWebSocket($address, '/closure');
        self::assertSame(101, $ws->status(), 'the clients that left hold no share of the budget');
        $ws->sendText('hello');
        self::assertSame('hello', $ws->read()[1] ?? null);
        self::assertSame(503, (new RawWebSocket($address, '/closure'))->status(), 'and that one holds the room');
        $server->stop();
    }

    public function testWsMemoryTakesASize(): void
    {
        [$code, $out] = ServerProcess::cli(['serve', self::APP, '--ws-memory', 'lots']);
        self::assertSame(2, $code);
        self::assertStringContainsString("option '--ws-memory' expects a size", $out);
    }

    /** @return array{int, int} open WebSockets and the budget, from the worker's refusal line */
    private static function refusalLine(ServerProcess $server): array
    {
        $line = ServerProcess::waitFor(static function () use ($server): ?array {
            return \preg_match("/upgrade refused \\(503\\): the worker's (\\d+) WebSockets hold \\d+ bytes of their budget of (\\d+) \\(--ws-memory\\)/", $server->output(), $m) === 1
                ? [(int) $m[1], (int) $m[2]] : null;
        }, 10, 'the refusal log line');
        return $line;
    }

    /** @return array{memory: int, pid: int} */
    private static function memory(RawHttp $http): array
    {
        return \json_decode($http->send("GET /memory HTTP/1.1\r\nHost: t\r\n\r\n")->response()['body'], true, 512, \JSON_THROW_ON_ERROR);
    }
}
