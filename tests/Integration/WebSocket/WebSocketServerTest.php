<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\WebSocket;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\Curl;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\RawWebSocket;
use Weft\Tests\Support\ServerProcess;
use Weft\WebSocket\Frame;

/**
 * The WebSocket server's behaviour around the protocol: the opening handshake's answers, the idle
 * timeout, stop and reload (1001), slow clients under broadcast (1008, never blocking the others),
 * sync mode and --max-request-time (a WebSocket is not a running request).
 */
final class WebSocketServerTest extends TestCase
{
    private const APP = __DIR__ . '/fixtures/ws.php';

    public function testTheOpeningHandshake(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1']);
        $address = $server->address();
        // RFC 6455 1.3's example key.
        $ws = new RawWebSocket($address, '/', ['Sec-WebSocket-Key' => 'dGhlIHNhbXBsZSBub25jZQ==']);
        self::assertSame(101, $ws->status());
        self::assertStringContainsString("\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", $ws->responseHead);
        self::assertMatchesRegularExpression('/\r\nUpgrade: websocket\r\n/i', $ws->responseHead);
        self::assertStringNotContainsStringIgnoringCase('content-length', $ws->responseHead);
        $ws->close();

        $version = new RawWebSocket($address, '/', ['Sec-WebSocket-Version' => '8']);
        self::assertSame(426, $version->status());
        self::assertStringContainsString("\r\nSec-WebSocket-Version: 13", $version->responseHead);
        foreach (['short' => 'abc', 'not base64' => '!!!!!!!!!!!!!!!!!!!!!!==', '15 bytes' => \base64_encode(\str_repeat('k', 15)) . '=='] as $key) {
            self::assertSame(400, (new RawWebSocket($address, '/', ['Sec-WebSocket-Key' => $key]))->status(), "key '$key'");
        }
        self::assertSame(400, (new RawWebSocket($address, '/', ['Connection' => 'keep-alive']))->status(), 'Connection without the upgrade token');
        self::assertSame(101, (new RawWebSocket($address, '/', ['Connection' => 'keep-alive, Upgrade', 'Upgrade' => 'WebSocket']))->status(), 'tokens are case-insensitive, in lists');
        self::assertSame(403, (new RawWebSocket($address, '/origin', ['Origin' => 'https://evil.example']))->status());
        self::assertSame(101, (new RawWebSocket($address, '/origin', ['Origin' => 'https://good.example']))->status());

        $http = new RawHttp($address);
        $plain = $http->send("GET /echo HTTP/1.1\r\nHost: t\r\n\r\n")->response();
        self::assertSame(426, $plain['status'], 'a plain GET is told to upgrade');
        self::assertSame(['websocket', 'Upgrade, keep-alive'], [$plain['headers']['upgrade'], $plain['headers']['connection']], 'RFC 9110 7.8: Upgrade goes with a Connection: upgrade option');
        self::assertSame(405, $http->send("POST /echo HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nContent-Length: 0\r\n\r\n")->response()['status']);
        self::assertSame('plain HTTP', \trim($http->send("GET /plain HTTP/1.1\r\nHost: t\r\n\r\n")->response()['body']), 'and the connection keeps serving HTTP');
        $server->stop();
    }

    public function testAnUpgradeWithAFieldThatWouldBreakTheHeadIsA500AndLogged(): void
    {
        // The rule of every other response (HeaderField): a 500 and the reason in the log, where the
        // 101 used to go out with the field silently left out.
        $server = new ServerProcess([self::APP, '--workers', '1']);
        $handshake = ['Connection' => 'Upgrade', 'Upgrade' => 'websocket', 'Sec-WebSocket-Version' => '13', 'Sec-WebSocket-Key' => 'dGhlIHNhbXBsZSBub25jZQ=='];
        $response = Curl::request('GET', "http://{$server->address()}/bad-header", $handshake, null, 5.0);
        self::assertSame(500, $response['status']);
        self::assertSame("Internal Server Error\n", $response['body']);
        self::assertArrayNotHasKey('injected', $response['headers']);
        self::assertArrayNotHasKey('sec-websocket-accept', $response['headers']);
        ServerProcess::waitFor(
            fn () => \str_contains($server->output(), 'GET /bad-header: the upgrade could not be answered: Invalid response header "X-Evil"') ?: null,
            10,
            'the reason in the log',
        );
        self::assertSame(101, (new RawWebSocket($server->address(), '/echo'))->status(), 'and the worker goes on upgrading');
        $server->stop();
    }

    public function testBadWebSocketOptionsAreRefusedWithAReason(): void
    {
        [$code, $out] = ServerProcess::cli(['serve', self::APP, '--ws-max-message', '0']);
        self::assertSame(2, $code);
        self::assertStringContainsString('message limit must be at least 1 byte', $out);
        [$code, $out] = ServerProcess::cli(['serve', self::APP, '--ws-idle-timeout', '-1']);
        self::assertSame(2, $code);
        self::assertStringContainsString("'--ws-idle-timeout' must be positive", $out);
    }

    public function testFramesSentRightBehindTheHandshakeAreNotLost(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1']);
        $socket = \stream_socket_client('tcp://' . $server->address());
        $key = \base64_encode(\random_bytes(16));
        \fwrite($socket, "GET /echo HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: $key\r\nSec-WebSocket-Version: 13\r\n\r\n"
            . Frame::encodeMasked(Frame::TEXT, 'eager'));
        \stream_set_timeout($socket, 5);
        $received = '';
        while (!\str_contains($received, 'eager') && !\feof($socket)) {
            $received .= (string) \fread($socket, 4096);
        }
        self::assertStringStartsWith('HTTP/1.1 101', $received);
        self::assertStringEndsWith("\x81\x05eager", $received);
        \fclose($socket);
        $server->stop();
    }

    public function testTheEventFormCallsOpenEachMessageInOrderAndClose(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1']);
        $ws = new RawWebSocket($server->address(), '/events');
        // Sent at once, while onOpen still sleeps: answered after it, in order, the slow one included.
        $ws->send(Frame::encodeMasked(Frame::TEXT, 'a') . Frame::encodeMasked(Frame::TEXT, 'slow') . Frame::encodeMasked(Frame::TEXT, 'b'));
        $got = [];
        for ($i = 0; $i < 4; $i++) {
            $got[] = $ws->read()[1] ?? null;
        }
        self::assertSame(['open', 'A', 'SLOW', 'B'], $got);
        $ws->send(Frame::encodeMasked(Frame::CLOSE, \pack('n', 4002)));
        [$frames, $ended] = $ws->readToEnd();
        self::assertSame(4002, RawWebSocket::code($frames[0][1] ?? ''));
        self::assertTrue($ended);
        $failing = new RawWebSocket($server->address(), '/events');
        self::assertSame('open', $failing->read()[1] ?? null);
        $failing->sendText('throw');
        [$frames] = $failing->readToEnd();
        self::assertSame(1011, RawWebSocket::code($frames[0][1] ?? ''));
        $stats = ServerProcess::waitFor(function () use ($server): ?array {
            $stats = \json_decode((new RawHttp($server->address()))->send("GET /events-stats HTTP/1.1\r\nHost: t\r\n\r\n")->response()['body'], true);
            return $stats['closed'] === 2 ? $stats : null;
        }, 10, 'two onClose calls');
        self::assertSame(['open' => 0, 'closed' => 2, 'codes' => [4002, 1011]], $stats);
        self::assertStringContainsString('onMessage failed', $server->output());
        $server->stop();
    }

    public function testAReceiveUnderATimeoutCanBeRetried(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1']);
        $ws = new RawWebSocket($server->address(), '/timeout');
        self::assertSame('timed out', $ws->read()[1] ?? null);
        $ws->sendText('x');
        self::assertSame('then x', $ws->read()[1] ?? null);
        $ws->close();
        $server->stop();
    }

    public function testAnIdleConnectionIsClosedWith1001AndTrafficKeepsItOpen(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--ws-idle-timeout', '1']);
        $busy = new RawWebSocket($server->address(), '/echo');
        $idle = new RawWebSocket($server->address(), '/echo');
        for ($i = 0; $i < 8; $i++) { // 2 s of life, never 1 s without a frame
            $busy->send(Frame::encodeMasked(Frame::PING, "$i"));
            self::assertSame([Frame::PONG, "$i", true], $busy->read());
            \usleep(250_000);
        }
        [$frames, $ended] = $idle->readToEnd(5.0);
        self::assertSame(Frame::CLOSE, $frames[0][0] ?? null);
        self::assertSame(1001, RawWebSocket::code($frames[0][1]));
        self::assertSame('idle timeout', \substr($frames[0][1], 2));
        self::assertTrue($ended);
        $busy->sendText('still here');
        self::assertSame([Frame::TEXT, 'still here', true], $busy->read());
        $busy->close();
        $server->stop();
    }

    public function testStopClosesEveryWebSocketWith1001AndTheServerExits(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '2']);
        $sockets = [];
        for ($i = 0; $i < 6; $i++) {
            $sockets[] = $ws = new RawWebSocket($server->address(), $i % 2 === 0 ? '/echo' : '/sleepy');
            self::assertSame(101, $ws->status());
        }
        $started = \microtime(true);
        \posix_kill($server->masterPid(), \SIGTERM);
        foreach ($sockets as $ws) {
            [$frames, $ended] = $ws->readToEnd(10.0);
            $close = \array_values(\array_filter($frames, static fn (array $f): bool => $f[0] === Frame::CLOSE));
            self::assertSame(1001, RawWebSocket::code($close[0][1] ?? ''), 'a close frame with 1001');
            self::assertTrue($ended);
        }
        ServerProcess::waitFor(fn () => !$server->isRunning(), 10, 'the server to exit');
        self::assertLessThan(8.0, \microtime(true) - $started, 'no waiting for the 10 s grace period');
        self::assertFalse($server->isRunning());
    }

    public function testAReloadSaysGoodbyeWith1001AndNewConnectionsReachTheNewWorkers(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1']);
        $old = new RawWebSocket($server->address(), '/echo');
        $before = $server->workerPids();
        [$code] = $server->control('reload');
        self::assertSame(0, $code);
        [$frames] = $old->readToEnd(10.0);
        self::assertSame(1001, RawWebSocket::code($frames[0][1] ?? ''));
        ServerProcess::waitFor(fn () => $server->workerPids() !== [] && $server->workerPids() !== $before, 20, 'the new generation');
        $new = new RawWebSocket($server->address(), '/echo');
        $new->sendText('new code');
        self::assertSame([Frame::TEXT, 'new code', true], $new->read());
        $new->close();
        $server->stop();
    }

    public function testASlowClientIsClosedWith1008WhileTheBroadcastGoesOnToTheOthers(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1']);
        $fast = new RawWebSocket($server->address(), '/room');
        self::assertSame(Frame::TEXT, $fast->read()[0]); // "joined"
        $slow = new RawWebSocket($server->address(), '/room', [], 16384); // reads nothing until the end
        \usleep(100_000);
        // 32 MB to everyone, over a second or more: far more than socket buffers hold.
        $fast->sendText('flood 512 65536');
        $bytes = 0;
        $started = \microtime(true);
        while (true) {
            $frame = $fast->read(20.0);
            self::assertNotNull($frame, 'the fast client got everything without waiting on the slow one');
            if ($frame[0] === Frame::TEXT && $frame[1] === 'flood done') {
                break;
            }
            $bytes += \strlen($frame[1]);
        }
        self::assertSame(512 * 65536, $bytes);
        self::assertLessThan(20.0, \microtime(true) - $started);
        $fast->sendText('count');
        do {
            $frame = $fast->read(5.0);
        } while ($frame !== null && !\str_starts_with($frame[1], 'members'));
        self::assertSame('members 1', $frame[1] ?? null, 'the slow client is out of the room');
        // What the slow client gets when it finally reads: some of the flood, then 1008.
        [$frames, $ended] = $slow->readToEnd(20.0);
        $last = \end($frames);
        self::assertSame(Frame::CLOSE, $last[0]);
        self::assertSame(1008, RawWebSocket::code($last[1]));
        self::assertLessThan(512, \count($frames) - 2, 'it did not get the whole flood');
        self::assertTrue($ended);
        $fast->close();
        $server->stop();
    }

    public function testMessagesBeingReceivedShareTheWorkersMemoryBudget(): void
    {
        // A budget of 24 MB (half of --memory-limit 48M) and messages of up to 8 MB: twelve clients each
        // sending 4 MB of a 6 MB frame would hold 48 MB and end the worker (and every connection on it).
        // Past the budget, the connection receiving is closed with 1013 instead; the worker lives on.
        $server = new ServerProcess([self::APP, '--workers', '1', '--memory-limit', '48M', '--max-body', '1M', '--ws-max-message', '8M']);
        $workers = $server->workerPids();
        $clients = [];
        $chunk = \str_repeat('x', 65536);
        for ($i = 0; $i < 12; $i++) {
            $ws = new RawWebSocket($server->address(), '/echo');
            // A binary frame declaring 6 MB, masked with a zero key (the payload goes as it is), then 4 MB of it.
            $ws->send("\x82\xff" . \pack('J', 6 * 1024 * 1024) . "\0\0\0\0");
            for ($sent = 0; $sent < 4 * 1024 * 1024; $sent += \strlen($chunk)) {
                try {
                    $ws->send($chunk);
                } catch (\Throwable) {
                    break; // closed by the server: refused
                }
            }
            $clients[] = $ws;
        }
        $log = ServerProcess::waitFor(
            static fn (): ?string => \str_contains($server->output(), 'closed with 1013') ? $server->output() : null,
            15.0,
            'the 1013 refusal in the log',
        );
        self::assertMatchesRegularExpression('/over its budget of 25165824 \(half of --memory-limit\)/', $log);
        // The worker that held the others is still the one serving, and serves a new WebSocket at once.
        $echo = new RawWebSocket($server->address(), '/echo');
        $echo->sendText('still here');
        $frame = $echo->read(10.0);
        self::assertSame([Frame::TEXT, 'still here'], [$frame[0] ?? null, $frame[1] ?? null]);
        self::assertSame($workers, $server->workerPids());
        self::assertStringNotContainsString('exited', $server->output());
        $echo->close();
        foreach ($clients as $ws) {
            try {
                $ws->close();
            } catch (\Throwable) {
            }
        }
        $server->stop();
    }

    public function testInSyncModeAWebSocketDoesNotHoldTheWorkersRequestSlot(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--mode', 'sync', '--max-request-time', '1']);
        $ws = new RawWebSocket($server->address(), '/echo');
        $ws->sendText('one');
        self::assertSame([Frame::TEXT, 'one', true], $ws->read());
        $http = new RawHttp($server->address());
        self::assertSame(200, $http->send("GET /plain HTTP/1.1\r\nHost: t\r\n\r\n")->response()['status']);
        \usleep(1_500_000); // past --max-request-time: the WebSocket is not a request
        $ws->sendText('two');
        self::assertSame([Frame::TEXT, 'two', true], $ws->read());
        self::assertSame([], $server->status()['workers'][0]['running'] ?? [], 'status lists no running request');
        $ws->close();
        $server->stop();
    }
}
