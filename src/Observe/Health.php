<?php

declare(strict_types=1);

namespace Weft\Observe;

/**
 * Whether the server can take its full load, for a load balancer's health check: every configured
 * worker slot has a ready worker and the master is not stopping. During a rolling reload the old
 * generation keeps serving until the new one is ready, so a reload stays healthy.
 */
final class Health
{
    private function __construct(public readonly bool $healthy, public readonly string $reason, public readonly int $ready, public readonly int $wanted)
    {
    }

    /** @param array{master: array<string, mixed>, workers: list<array<string, mixed>>} $status */
    public static function check(array $status): self
    {
        $wanted = (int) $status['master']['workers'];
        $ready = 0;
        $starting = 0;
        $stuck = 0;
        foreach ($status['workers'] as $worker) {
            if ($worker['state'] === 'ready') {
                $ready++;
            } elseif ($worker['state'] === 'starting') {
                $starting++;
            } elseif ($worker['state'] === 'stuck') {
                $stuck++; // silent for seconds: it serves nothing until it reports again or is replaced
            }
        }
        if ($status['master']['state'] === 'stopping') {
            return new self(false, 'draining', $ready, $wanted);
        }
        if ($ready >= $wanted) {
            return new self(true, 'ok', $ready, $wanted);
        }
        return new self(false, $starting > 0 ? 'starting' : ($stuck > 0 ? 'worker stuck' : 'short of workers'), $ready, $wanted);
    }

    public function json(): string
    {
        return \json_encode([
            'status' => $this->healthy ? 'ok' : 'unavailable',
            'reason' => $this->reason,
            'ready_workers' => $this->ready,
            'workers' => $this->wanted,
        ], \JSON_THROW_ON_ERROR) . "\n";
    }
}
