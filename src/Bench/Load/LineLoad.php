<?php

declare(strict_types=1);

namespace Weft\Bench\Load;

use Weft\Coroutine\WaitGroup;
use Weft\Socket\ConnectException;
use Weft\Socket\ConnectOptions;
use Weft\Socket\Socket;
use Weft\Socket\SocketException;

use function Weft\go;
use function Weft\run;

/**
 * The line-protocol load client of the line experiment (docs/benchmarks.md), written with Weft's own coroutines and sockets; it runs
 * as its own process (bin/weft bench _line-load) pinned to the load CPU.
 *
 * - few-fast: each client connects, sends "hello world\n" and reads the reply 100 times, disconnects,
 *   and starts again until the time is up.
 * - many: every client connects once; then each sends one line and reads its reply, over and over.
 *
 * A reply other than "hello world" is a mismatch error; failed connects, timeouts and connections the
 * server closed are errors of their own kind.
 */
final class LineLoad
{
    public const LINE = 'hello world';
    public const MESSAGES_PER_CONNECTION = 100;
    private const TIMEOUT = 5.0;

    private readonly Tally $tally;
    private int $connections = 0;

    private function __construct(private readonly string $address)
    {
        $this->tally = new Tally();
    }

    /** @return array<string, mixed> */
    public static function run(string $host, int $port, string $pattern, int $clients, float $seconds): array
    {
        $load = new self("$host:$port");
        return run(static fn (): array => match ($pattern) {
            'few-fast' => $load->fewFast($clients, $seconds),
            'many' => $load->many($clients, $seconds),
            default => throw new \InvalidArgumentException("Unknown line load pattern '$pattern' (few-fast or many)"),
        });
    }

    /** @return array<string, mixed> */
    private function fewFast(int $clients, float $seconds): array
    {
        $start = \hrtime(true);
        $deadline = $start + (int) ($seconds * 1e9);
        $wg = new WaitGroup();
        for ($i = 0; $i < $clients; $i++) {
            $wg->add();
            go(function () use ($deadline, $wg): void {
                try {
                    while (\hrtime(true) < $deadline) {
                        $socket = $this->connect();
                        if ($socket === null) {
                            // Do not spin on a refused connect.
                            \Weft\sleep(0.01);
                            continue;
                        }
                        try {
                            for ($n = 0; $n < self::MESSAGES_PER_CONNECTION && \hrtime(true) < $deadline; $n++) {
                                if (!$this->exchange($socket)) {
                                    break;
                                }
                            }
                        } finally {
                            $socket->close();
                        }
                    }
                } finally {
                    $wg->done();
                }
            });
        }
        $wg->wait();
        return $this->tally->result('few-fast', $clients, $this->connections, (\hrtime(true) - $start) / 1e9);
    }

    /** @return array<string, mixed> */
    private function many(int $clients, float $seconds): array
    {
        $sockets = [];
        $connecting = new WaitGroup();
        for ($i = 0; $i < $clients; $i++) {
            $connecting->add();
            go(function () use (&$sockets, $connecting): void {
                try {
                    $socket = $this->connect();
                    if ($socket !== null) {
                        $sockets[] = $socket;
                    }
                } finally {
                    $connecting->done();
                }
            });
        }
        $connecting->wait();
        $elapsed = Tally::lockStep($sockets, $seconds, $this->exchange(...));
        return $this->tally->result('many', $clients, $this->connections, $elapsed);
    }

    private function connect(): ?Socket
    {
        try {
            $socket = Socket::connect($this->address, ConnectOptions::defaults()->withConnectTimeout(self::TIMEOUT)->withTcpNoDelay(true));
            $this->connections++;
            return $socket;
        } catch (ConnectException|SocketException) {
            $this->tally->error('connect');
            return null;
        }
    }

    /** One line out, one reply in; false when the connection is no longer usable. */
    private function exchange(Socket $socket): bool
    {
        return $this->tally->exchange(static function () use ($socket): ?string {
            $socket->write(self::LINE . "\n", self::TIMEOUT);
            return $socket->readLine(1024, self::TIMEOUT);
        }, self::LINE);
    }
}
