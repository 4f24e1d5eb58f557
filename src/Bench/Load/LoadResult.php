<?php

declare(strict_types=1);

namespace Weft\Bench\Load;

/**
 * What one load generator run measured. Latencies are in seconds (null when the tool did not report
 * them); error counts are keyed by kind: connect, read, write, timeout, non2xx, mismatch, closed, and
 * no_answer (connections that waited the whole run without an answer, see WrkParser::noAnswer()).
 */
final class LoadResult
{
    /** @param array<string, int> $errors */
    public function __construct(
        public readonly string $tool,
        public readonly int $requests,
        public readonly float $seconds,
        public readonly float $perSecond,
        public readonly ?float $p50,
        public readonly ?float $p90,
        public readonly ?float $p99,
        public readonly ?float $max,
        public readonly array $errors,
        /** Connections the tool kept open (wrk -c), when it says. */
        public readonly ?int $connections = null,
    ) {
    }

    /**
     * Latency figures are meaningless when every request timed out: wrk then prints 0.00us for all of
     * them. Such a run has no latency, not a zero one.
     */
    public function hasLatency(): bool
    {
        return $this->p50 !== null && $this->requests > ($this->errors['timeout'] ?? 0);
    }

    public function errorTotal(): int
    {
        return (int) \array_sum($this->errors);
    }

    /** @return array<string, mixed> the row metrics this run contributes (latency in milliseconds) */
    public function metrics(): array
    {
        $ms = fn (?float $s): ?float => $s === null || !$this->hasLatency() ? null : \round($s * 1000, 3);
        return [
            'tool' => $this->tool,
            'requests' => $this->requests,
            'duration_s' => \round($this->seconds, 3),
            'rps' => \round($this->perSecond, 2),
            'p50_ms' => $ms($this->p50),
            'p90_ms' => $ms($this->p90),
            'p99_ms' => $ms($this->p99),
            'max_ms' => $ms($this->max),
            'errors' => $this->errors,
            'connections' => $this->connections,
        ];
    }
}
