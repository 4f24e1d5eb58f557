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
    public string $inbox = '';
    public ?string $watcher = null;
    /** The worker's stdout and stderr, logged by the master. */
    public ?WorkerOutput $output = null;

    /** @param resource $channel the master's end of the socket pair */
    public function __construct(
        public readonly int $pid,
        public readonly int $slot,
        public readonly int $generation,
        public readonly float $started,
        public readonly mixed $channel,
    ) {
    }
}
