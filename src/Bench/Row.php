<?php

declare(strict_types=1);

namespace Weft\Bench;

/**
 * One cell of a scenario's matrix: its parameters (mode, loop, workers, concurrency, ...), fixed when the
 * matrix is built, and what the run measured. A row that cannot run here is skipped with the reason, a
 * row that broke is failed with the reason: neither is ever dropped from the report.
 */
final class Row
{
    public const PENDING = 'pending';
    public const OK = 'ok';
    public const SKIPPED = 'skipped';
    public const FAILED = 'failed';

    public string $status = self::PENDING;
    public ?string $reason = null;
    /** @var array<string, mixed> figures keyed by name: rps, p99_ms, errors, cpu_pct, rss_bytes, ... */
    public array $metrics = [];
    /** Wall time the row took, start-up and tear-down included. */
    public float $seconds = 0.0;
    /** @var list<string> side notes worth keeping with the row (e.g. a log file) */
    public array $notes = [];

    /** @param array<string, int|float|string|bool|null> $params */
    public function __construct(public readonly string $scenario, public readonly array $params)
    {
    }

    public function param(string $name): mixed
    {
        return $this->params[$name] ?? null;
    }

    public function metric(string $name): mixed
    {
        return $this->metrics[$name] ?? null;
    }

    /** A numeric figure, or null when it was not measured. */
    public function number(string $name): ?float
    {
        $value = $this->metrics[$name] ?? null;
        return \is_int($value) || \is_float($value) ? (float) $value : null;
    }

    public function isOk(): bool
    {
        return $this->status === self::OK;
    }

    public function skip(string $reason): void
    {
        $this->status = self::SKIPPED;
        $this->reason = $reason;
    }

    public function fail(string $reason): void
    {
        $this->status = self::FAILED;
        $this->reason = $reason;
    }

    /** Sum of every error count of the row (connect, read, write, timeout, non-2xx, mismatch, ...). */
    public function errorTotal(): int
    {
        $errors = $this->metrics['errors'] ?? [];
        return \is_array($errors) ? (int) \array_sum($errors) : 0;
    }

    public function label(string ...$without): string
    {
        $parts = [];
        foreach ($this->params as $name => $value) {
            // A configuration name already says its mode.
            if (\in_array($name, $without, true) || $value === null || $value === '' || ($name === 'mode' && isset($this->params['config']))) {
                continue;
            }
            $parts[] = match ($name) {
                'workers' => "w=$value",
                'concurrency' => "c=$value",
                'delay' => "delay {$value}s",
                'hooks' => "hooks $value",
                'instances' => "$value inst.",
                default => (string) $value,
            };
        }
        return \implode(' ', $parts);
    }

    /** @return array<string, mixed> */
    public function toArray(): array
    {
        return [
            'params' => $this->params,
            'status' => $this->status,
            'reason' => $this->reason,
            'metrics' => $this->metrics,
            'seconds' => \round($this->seconds, 2),
            'notes' => $this->notes,
            'too_short' => RunLength::tooShort($this),
        ];
    }
}
