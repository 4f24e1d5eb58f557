<?php

declare(strict_types=1);

namespace Weft\Bench\Load;

use Weft\Coroutine\Timeout;
use Weft\Coroutine\WaitGroup;
use Weft\Socket\ConnectException;
use Weft\Socket\ConnectionClosed;
use Weft\Socket\ConnectOptions;
use Weft\Socket\Socket;
use Weft\Socket\SocketException;

use function Weft\go;
use function Weft\run;

/**
 * The line-protocol load client of BENCH.md 5, written with Weft's own coroutines and sockets; it runs
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
    /** One round trip in this many has its latency kept: enough for percentiles, little memory. */
    private const LATENCY_SAMPLE = 8;

    private int $messages = 0;
    /** @var array{connect: int, timeout: int, closed: int, mismatch: int} */
    private array $errors = ['connect' => 0, 'timeout' => 0, 'closed' => 0, 'mismatch' => 0];
    /** @var list<float> */
    private array $latencies = [];
    private int $connections = 0;

    private function __construct(private readonly string $address)
    {
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
        return $this->result('few-fast', $clients, (\hrtime(true) - $start) / 1e9);
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
        // The clock starts once every client is connected: the pattern measures messages, not connects.
        $start = \hrtime(true);
        $deadline = $start + (int) ($seconds * 1e9);
        $wg = new WaitGroup();
        foreach ($sockets as $socket) {
            $wg->add();
            go(function () use ($socket, $deadline, $wg): void {
                try {
                    while (\hrtime(true) < $deadline && $this->exchange($socket)) {
                    }
                } finally {
                    $socket->close();
                    $wg->done();
                }
            });
        }
        $wg->wait();
        return $this->result('many', $clients, (\hrtime(true) - $start) / 1e9);
    }

    private function connect(): ?Socket
    {
        try {
            $socket = Socket::connect($this->address, ConnectOptions::defaults()->withConnectTimeout(self::TIMEOUT)->withTcpNoDelay(true));
            $this->connections++;
            return $socket;
        } catch (ConnectException|SocketException) {
            $this->errors['connect']++;
            return null;
        }
    }

    /** One line out, one reply in; false when the connection is no longer usable. */
    private function exchange(Socket $socket): bool
    {
        $sent = \hrtime(true);
        try {
            $socket->write(self::LINE . "\n", self::TIMEOUT);
            $reply = $socket->readLine(1024, self::TIMEOUT);
        } catch (Timeout) {
            $this->errors['timeout']++;
            return false;
        } catch (ConnectionClosed|SocketException) {
            $this->errors['closed']++;
            return false;
        }
        if ($reply === null) {
            $this->errors['closed']++;
            return false;
        }
        if ($reply !== self::LINE) {
            $this->errors['mismatch']++;
            return false;
        }
        $this->messages++;
        if ($this->messages % self::LATENCY_SAMPLE === 0) {
            $this->latencies[] = (\hrtime(true) - $sent) / 1e6;
        }
        return true;
    }

    /** @return array<string, mixed> */
    private function result(string $pattern, int $clients, float $seconds): array
    {
        \sort($this->latencies);
        $percentile = function (float $p): ?float {
            $n = \count($this->latencies);
            return $n === 0 ? null : $this->latencies[\min($n - 1, (int) \floor($p * $n))];
        };
        return [
            'pattern' => $pattern,
            'clients' => $clients,
            'connections' => $this->connections,
            'messages' => $this->messages,
            'seconds' => $seconds,
            'messages_per_second' => $seconds > 0 ? $this->messages / $seconds : 0.0,
            'p50_ms' => $percentile(0.50),
            'p90_ms' => $percentile(0.90),
            'p99_ms' => $percentile(0.99),
            'max_ms' => $this->latencies === [] ? null : \end($this->latencies),
            'errors' => $this->errors,
            'loop' => \get_class(\Weft\Loop\Loop::get()),
        ];
    }
}
