<?php

declare(strict_types=1);

namespace Weft\Bench\Load;

use Weft\Coroutine\Timeout;
use Weft\Coroutine\WaitGroup;
use Weft\Socket\ConnectOptions;
use Weft\Socket\Socket;
use Weft\Socket\SocketException;
use Weft\WebSocket\Frame;

use function Weft\go;
use function Weft\run;

/**
 * The WebSocket load client of `bin/weft bench websocket` (bin/weft bench _ws-load), a process of its
 * own on the load CPU, written with Weft's coroutines and sockets:
 *
 * - echo: every client connects once (handshake), then sends "hello world" as a masked text frame and
 *   reads the echo, over and over, like the line protocol's "many" pattern.
 * - broadcast: every client connects; then, round after round, the first client sends one message and
 *   the round lasts until the last client has received it (the server broadcasts it to all).
 *
 * @internal
 */
final class WebSocketLoad
{
    public const MESSAGE = 'hello world';
    private const TIMEOUT = 10.0;

    private readonly Tally $tally;
    private readonly string $frame;
    private readonly string $expected;

    private function __construct(private readonly string $address)
    {
        $this->tally = new Tally();
        $this->frame = Frame::encodeMasked(Frame::TEXT, self::MESSAGE);
        $this->expected = Frame::encode(Frame::TEXT, self::MESSAGE);
    }

    /** @return array<string, mixed> */
    public static function run(string $host, int $port, string $pattern, int $clients, float $seconds): array
    {
        $load = new self("$host:$port");
        return run(static fn (): array => match ($pattern) {
            'echo' => $load->echo($clients, $seconds),
            'broadcast' => $load->broadcast($clients, \max(1, (int) $seconds)),
            default => throw new \InvalidArgumentException("Unknown WebSocket load pattern '$pattern' (echo or broadcast)"),
        });
    }

    /** @return array<string, mixed> */
    private function echo(int $clients, float $seconds): array
    {
        $sockets = $this->connectAll($clients);
        $elapsed = Tally::lockStep($sockets, $seconds, $this->exchange(...));
        return $this->tally->result('echo', $clients, \count($sockets), $elapsed);
    }

    /**
     * @param int $rounds messages broadcast, one after the other
     * @return array<string, mixed>
     */
    private function broadcast(int $clients, int $rounds): array
    {
        $sockets = $this->connectAll($clients);
        $start = \hrtime(true);
        $times = [];
        for ($round = 0; $round < $rounds && $sockets !== []; $round++) {
            $payload = "round $round";
            $expected = Frame::encode(Frame::TEXT, $payload);
            $wg = new WaitGroup();
            $last = 0;
            foreach ($sockets as $socket) {
                $wg->add();
                go(function () use ($socket, $expected, $wg, &$last): void {
                    try {
                        $got = $socket->readExactly(\strlen($expected), self::TIMEOUT);
                        if ($got !== $expected) {
                            $this->tally->error('mismatch');
                            return;
                        }
                        $this->tally->received();
                        $last = \max($last, \hrtime(true));
                    } catch (Timeout) {
                        $this->tally->error('timeout');
                    } catch (SocketException) {
                        $this->tally->error('closed');
                    } finally {
                        $wg->done();
                    }
                });
            }
            $sent = \hrtime(true);
            $sockets[0]->write(Frame::encodeMasked(Frame::TEXT, $payload), self::TIMEOUT);
            $wg->wait();
            $times[] = ($last - $sent) / 1e6;
        }
        foreach ($sockets as $socket) {
            $socket->close();
        }
        $result = $this->tally->result('broadcast', $clients, \count($sockets), (\hrtime(true) - $start) / 1e9);
        \sort($times);
        $result['rounds'] = \count($times);
        $result['round_ms'] = $times;
        $result['last_p50_ms'] = $times === [] ? null : $times[\intdiv(\count($times), 2)];
        $result['last_max_ms'] = $times === [] ? null : \end($times);
        return $result;
    }

    /** @return list<Socket> */
    private function connectAll(int $clients): array
    {
        $sockets = [];
        $wg = new WaitGroup();
        for ($i = 0; $i < $clients; $i++) {
            $wg->add();
            go(function () use (&$sockets, $wg): void {
                try {
                    $socket = Socket::connect($this->address, ConnectOptions::defaults()->withConnectTimeout(self::TIMEOUT)->withTcpNoDelay(true));
                    $key = \base64_encode(\random_bytes(16));
                    $socket->write("GET / HTTP/1.1\r\nHost: {$this->address}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: $key\r\nSec-WebSocket-Version: 13\r\n\r\n", self::TIMEOUT);
                    $status = $socket->readLine(1024, self::TIMEOUT);
                    while (($line = $socket->readLine(8192, self::TIMEOUT)) !== null && $line !== '') {
                    }
                    if ($status === null || !\str_starts_with($status, 'HTTP/1.1 101')) {
                        $this->tally->error('connect');
                        $socket->close();
                        return;
                    }
                    $sockets[] = $socket;
                } catch (SocketException|Timeout) {
                    $this->tally->error('connect');
                } finally {
                    $wg->done();
                }
            });
        }
        $wg->wait();
        return $sockets;
    }

    private function exchange(Socket $socket): bool
    {
        return $this->tally->exchange(function () use ($socket): string {
            $socket->write($this->frame, self::TIMEOUT);
            return $socket->readExactly(\strlen($this->expected), self::TIMEOUT);
        }, $this->expected);
    }
}
