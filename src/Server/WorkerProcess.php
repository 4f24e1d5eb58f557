<?php

declare(strict_types=1);

namespace Weft\Server;

/** @internal The master's record of one worker process. */
final class WorkerProcess
{
    public bool $ready = false;
    public bool $retiring = false;
    /** @var array<string, mixed> */
    public array $stats = [];
    /** When the master last heard from it (the liveness check). */
    public float $lastSeen;
    /** Why it failed to load the application, as it reported before exiting. */
    public ?string $bootError = null;
    /** Set when the liveness check gave up on it: why. */
    public ?string $timedOut = null;
    /** When the liveness check found it silent for longer than a few reports: it is shown as stuck. */
    public ?float $stuckSince = null;
    /** Set when it wrote something on its channel that is not a message: why it is being stopped. */
    public ?string $fault = null;
    /** The worker's stdout and stderr, logged by the master. */
    public ?WorkerOutput $output = null;
    /** The request it started last, shared with it (what a worker stuck at once never reported). */
    public ?Scoreboard $scoreboard = null;

    public function __construct(
        public readonly int $pid,
        public readonly int $slot,
        public readonly int $generation,
        public readonly float $started,
        public readonly WorkerChannel $channel,
    ) {
        $this->lastSeen = $started;
    }
}
