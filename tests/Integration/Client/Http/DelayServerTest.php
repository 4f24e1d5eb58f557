<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Client\Http;

use PHPUnit\Framework\TestCase;
use Weft\Client\Http\DelayServer;
use Weft\Loop\Loop;
use Weft\Socket\Socket;

use function Weft\run;

final class DelayServerTest extends TestCase
{
    protected function setUp(): void
    {
        Loop::reset('select');
    }

    protected function tearDown(): void
    {
        Loop::reset('select');
    }

    public function testDelaysKeepsAliveAndAnswersPipelinedRequestsInOrder(): void
    {
        [$replies, $elapsed, $stats] = run(static function (): array {
            $server = DelayServer::listen('127.0.0.1:0', 0.1);
            $server->start();
            try {
                $socket = Socket::connect($server->address());
                $start = \hrtime(true);
                $socket->write("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /?delay=0 HTTP/1.1\r\nHost: x\r\n\r\n");
                $expected = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok";
                $replies = [$socket->readExactly(\strlen($expected)), $socket->readExactly(\strlen($expected))];
                $elapsed = (\hrtime(true) - $start) / 1e9;
                $socket->write("GET /?delay=0 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
                $last = '';
                while (($chunk = $socket->read()) !== null) {
                    $last .= $chunk;
                }
                $replies[] = $last;
                $socket->close();
                return [$replies, $elapsed, $server->stats()];
            } finally {
                $server->stop();
            }
        });
        $ok = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok";
        self::assertSame([$ok, $ok, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"], $replies);
        self::assertGreaterThanOrEqual(0.09, $elapsed, 'the default delay applied');
        self::assertSame(1, $stats['connections']);
        self::assertSame(3, $stats['requests']);
    }

    public function testRejectsMalformedRequests(): void
    {
        self::assertStringStartsWith('HTTP/1.1 400 ', self::exchange("NOT HTTP\r\n\r\n"));
    }

    /** A refusal is the server's own answer for its status (reason and message), not a 400's reason on any code. */
    public function testRefusesAnOversizedHeadAsTheServerWould(): void
    {
        $reply = self::exchange("GET / HTTP/1.1\r\nHost: x\r\nX: " . \str_repeat('a', 10000) . "\r\n\r\n");
        self::assertStringStartsWith("HTTP/1.1 431 Request Header Fields Too Large\r\n", $reply);
        self::assertStringContainsString("\r\nConnection: close\r\n", $reply);
    }

    /** What a fresh server sends back for $bytes on one connection, until it closes. */
    private static function exchange(string $bytes): string
    {
        return run(static function () use ($bytes): string {
            $server = DelayServer::listen();
            $server->start();
            try {
                $socket = Socket::connect($server->address());
                $socket->write($bytes);
                $reply = '';
                while (($chunk = $socket->read()) !== null) {
                    $reply .= $chunk;
                }
                return $reply;
            } finally {
                $server->stop();
            }
        });
    }
}
