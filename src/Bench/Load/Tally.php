<?php

declare(strict_types=1);

namespace Weft\Bench\Load;

use Weft\Coroutine\Timeout;
use Weft\Coroutine\WaitGroup;
use Weft\Socket\Socket;
use Weft\Socket\SocketException;

use function Weft\go;

/**
 * What a message-oriented load client (line, WebSocket) counts: messages answered, errors by kind, a
 * sample of round-trip times, and the result row every such client reports in the same shape.
 *
 * @internal
 */
final class Tally
{
    /** One round trip in this many has its latency kept: enough for percentiles, little memory. */
    private const LATENCY_SAMPLE = 8;

    private int $messages = 0;
    /** @var array{connect: int, timeout: int, closed: int, mismatch: int} */
    private array $errors = ['connect' => 0, 'timeout' => 0, 'closed' => 0, 'mismatch' => 0];
    /** @var list<float> */
    private array $latencies = [];

    /** @param 'connect'|'timeout'|'closed'|'mismatch' $kind */
    public function error(string $kind): void
    {
        $this->errors[$kind]++;
    }

    /**
     * One request and its reply: a reply other than $expected is a mismatch, null (the peer closed) and
     * a socket failure count as closed, a timeout as a timeout.
     *
     * @param \Closure(): ?string $roundTrip sends one message and returns the reply
     * @return bool whether the connection is still usable
     */
    public function exchange(\Closure $roundTrip, string $expected): bool
    {
        $sent = \hrtime(true);
        try {
            $reply = $roundTrip();
        } catch (Timeout) {
            $this->errors['timeout']++;
            return false;
        } catch (SocketException) {
            $this->errors['closed']++;
            return false;
        }
        if ($reply === null) {
            $this->errors['closed']++;
            return false;
        }
        if ($reply !== $expected) {
            $this->errors['mismatch']++;
            return false;
        }
        $this->received($sent);
        return true;
    }

    /** A message arrived; with the time it was sent (hrtime), its round trip may be sampled. */
    public function received(?int $sentAt = null): void
    {
        $this->messages++;
        if ($sentAt !== null && $this->messages % self::LATENCY_SAMPLE === 0) {
            $this->latencies[] = (\hrtime(true) - $sentAt) / 1e6;
        }
    }

    /**
     * Every connection sends and waits for its reply, over and over, until the time is up; each is
     * closed at the end. The clock starts here, once all are connected: the pattern measures messages,
     * not connects.
     *
     * @param list<Socket> $sockets
     * @param \Closure(Socket): bool $exchange one round trip; false when the connection is no longer usable
     * @return float the seconds measured
     */
    public static function lockStep(array $sockets, float $seconds, \Closure $exchange): float
    {
        $start = \hrtime(true);
        $deadline = $start + (int) ($seconds * 1e9);
        $wg = new WaitGroup();
        foreach ($sockets as $socket) {
            $wg->add();
            go(static function () use ($socket, $deadline, $wg, $exchange): void {
                try {
                    while (\hrtime(true) < $deadline && $exchange($socket)) {
                    }
                } finally {
                    $socket->close();
                    $wg->done();
                }
            });
        }
        $wg->wait();
        return (\hrtime(true) - $start) / 1e9;
    }

    /** @return array<string, mixed> */
    public function result(string $pattern, int $clients, int $connections, float $seconds): array
    {
        \sort($this->latencies);
        $percentile = function (float $p): ?float {
            $n = \count($this->latencies);
            return $n === 0 ? null : $this->latencies[\min($n - 1, (int) \floor($p * $n))];
        };
        return [
            'pattern' => $pattern,
            'clients' => $clients,
            'connections' => $connections,
            'messages' => $this->messages,
            'seconds' => $seconds,
            'messages_per_second' => $seconds > 0 ? $this->messages / $seconds : 0.0,
            'p50_ms' => $percentile(0.50),
            'p90_ms' => $percentile(0.90),
            'p99_ms' => $percentile(0.99),
            'max_ms' => $this->latencies === [] ? null : \end($this->latencies),
            'errors' => $this->errors,
            'loop' => \Weft\Loop\Loop::get()->name(),
        ];
    }
}
