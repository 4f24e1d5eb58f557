<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Bench;

use PHPUnit\Framework\TestCase;
use Weft\Bench\Load\LineLoad;
use Weft\Bench\Load\Probe;
use Weft\Bench\Load\WebSocketLoad;
use Weft\Loop\Loop;
use Weft\Tests\Support\ServerProcess;

/** The line and WebSocket load clients of `bin/weft bench`, briefly, against real servers. */
final class LoadClientsTest extends TestCase
{
    private const EXAMPLES = __DIR__ . '/../../../examples/';

    protected function tearDown(): void
    {
        Loop::reset('select');
    }

    public function testTheLineLoadCountsEveryPatternAgainstTheEchoServer(): void
    {
        $server = new ServerProcess([self::EXAMPLES . 'echo-line.php', '--protocol', 'line', '--workers', '1']);
        try {
            self::assertSame('hello world', Probe::line('127.0.0.1', $server->port, 'hello world'), 'the check before a row');
            foreach (['many', 'few-fast'] as $pattern) {
                Loop::reset('select');
                $result = LineLoad::run('127.0.0.1', $server->port, $pattern, 2, 0.3);
                self::assertSame($pattern, $result['pattern']);
                self::assertGreaterThan(8, $result['messages'], $pattern);
                self::assertSame(['connect' => 0, 'timeout' => 0, 'closed' => 0, 'mismatch' => 0], $result['errors'], $pattern);
                self::assertNotNull($result['p50_ms']);
                self::assertGreaterThanOrEqual(2, $result['connections']);
            }
        } finally {
            $server->stop();
        }
        Loop::reset('select');
        $refused = LineLoad::run('127.0.0.1', $server->port, 'many', 2, 0.1);
        self::assertSame(2, $refused['errors']['connect'], 'a server that is gone: every connect fails and is counted');
        self::assertSame(0, $refused['messages']);
    }

    public function testTheWebSocketLoadCountsEchoAndBroadcast(): void
    {
        $echo = new ServerProcess([self::EXAMPLES . 'websocket-echo.php', '--workers', '1']);
        try {
            Loop::reset('select');
            $result = WebSocketLoad::run('127.0.0.1', $echo->port, 'echo', 2, 0.3);
            self::assertGreaterThan(8, $result['messages']);
            self::assertSame(['connect' => 0, 'timeout' => 0, 'closed' => 0, 'mismatch' => 0], $result['errors']);
            self::assertSame(2, $result['connections']);
        } finally {
            $echo->stop();
        }
        $broadcast = new ServerProcess([self::EXAMPLES . 'websocket-broadcast.php', '--workers', '1']);
        try {
            Loop::reset('select');
            $result = WebSocketLoad::run('127.0.0.1', $broadcast->port, 'broadcast', 3, 2);
            self::assertSame(2, $result['rounds']);
            self::assertSame(6, $result['messages'], 'every client received every round');
            self::assertSame(0, \array_sum($result['errors']));
        } finally {
            $broadcast->stop();
        }
    }
}
