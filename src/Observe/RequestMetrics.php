<?php

declare(strict_types=1);

namespace Weft\Observe;

use Weft\Loop\Driver;

/**
 * A worker's request figures for /metrics: responses by status class, a duration histogram, and the
 * event loop's lag. Created once in the master and inherited by each worker at fork, so every worker
 * starts from zero and no static state is needed; the worker reports snapshot() with its other stats.
 *
 * Recorded by HttpSession at the one point where a request is complete, the same that writes the access
 * log line: the duration runs from the start of the request's handling to the last byte of its response
 * queued (for a streamed response, its end). Errors the HTTP parser answers by itself (400, 408, 413,
 * 431) never reach the application and are not counted here (the access log has them).
 */
final class RequestMetrics
{
    /**
     * Seconds; the classic Prometheus client buckets, shifted to the millisecond range servers live in,
     * and three below a millisecond, where a resident hello-world or a cached API answer lives: without
     * them its p50 and p99 would be guesses interpolated between 0 and 1 ms.
     */
    public const BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];
    private const LAG_INTERVAL = 0.25;

    /** @var array<string, int> status class => responses */
    private array $statuses = ['1xx' => 0, '2xx' => 0, '3xx' => 0, '4xx' => 0, '5xx' => 0];
    /** @var array<string, int> protocol ("HTTP/1.1", "HTTP/2.0") => responses */
    private array $protocols = [];
    /** @var list<int> per bucket, not cumulative (made cumulative when rendered) */
    private array $buckets;
    private int $count = 0;
    private float $sum = 0.0;
    private float $lagMax = 0.0;
    /** Seconds the loop was late in total: a counter, so spikes between two scrapes still show (rate()). */
    private float $lagTotal = 0.0;
    private ?string $lagTimer = null;

    public function __construct()
    {
        $this->buckets = \array_fill(0, \count(self::BUCKETS) + 1, 0);
    }

    /**
     * Samples the loop's lag: how late a repeating timer fires. A handler that computes for 200 ms
     * without waiting shows up here as 0.2 s, which no request figure shows directly.
     */
    public function watchLoop(Driver $driver): void
    {
        $expected = \hrtime(true) / 1e9 + self::LAG_INTERVAL;
        $this->lagTimer = $driver->repeat(self::LAG_INTERVAL, function () use (&$expected): void {
            $now = \hrtime(true) / 1e9;
            $lag = $now - $expected;
            $this->lagMax = \max($this->lagMax, $lag);
            // Only lateness beyond timer jitter counts as a stall.
            if ($lag > 0.005) {
                $this->lagTotal += $lag;
            }
            $expected = $now + self::LAG_INTERVAL;
        });
        $driver->unreference($this->lagTimer);
    }

    /**
     * What the worker reports; the loop lag is the largest since the previous report.
     *
     * @return array{statuses: array<string, int>, protocols: array<string, int>, duration: array{buckets: list<int>, count: int, sum: float}, loop_lag: float, loop_lag_total: float}
     */
    public function snapshot(): array
    {
        $lag = $this->lagMax;
        $this->lagMax = 0.0;
        return [
            'statuses' => $this->statuses,
            'protocols' => $this->protocols,
            'duration' => ['buckets' => $this->buckets, 'count' => $this->count, 'sum' => $this->sum],
            'loop_lag' => \round(\max(0.0, $lag), 6),
            'loop_lag_total' => \round($this->lagTotal, 6),
        ];
    }

    /** One answered request: called by the HTTP session once its response is complete, as the access log is. */
    public function record(int $status, float $seconds, string $protocol = 'HTTP/1.1'): void
    {
        $this->protocols[$protocol] = ($this->protocols[$protocol] ?? 0) + 1;
        $class = \intdiv($status, 100) . 'xx';
        if (isset($this->statuses[$class])) {
            $this->statuses[$class]++;
        }
        $this->count++;
        $this->sum += $seconds;
        $bucket = 0;
        foreach (self::BUCKETS as $bucket => $bound) {
            if ($seconds <= $bound) {
                $this->buckets[$bucket]++;
                return;
            }
        }
        $this->buckets[\count(self::BUCKETS)]++;
    }
}
