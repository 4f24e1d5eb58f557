<?php

declare(strict_types=1);

namespace Weft\Server;

/**
 * Something that runs beside the master and follows its life: the metrics endpoint, the systemd
 * notifier. The master calls these from its loop; a hook must not block it. Hooks keep the master free
 * of what an operator bolts on (HTTP for scrapes, datagrams to systemd).
 */
interface MasterHook
{
    /** Every worker serves (after start, and again after a reload, done or abandoned). */
    public const READY = 'ready';
    public const RELOADING = 'reloading';
    public const RELOADED = 'reloaded';
    public const STOPPING = 'stopping';

    /**
     * The master's loop is running. @param \Closure(): array<string, mixed> $status the master's status,
     * as `bin/weft status --json` prints it
     */
    public function start(\Closure $status): void;

    /** One of the constants above. */
    public function event(string $event): void;

    /** A worker is gone; $stats are its last reported figures, so totals can outlive it. */
    public function workerExited(array $stats): void;

    /** In a worker just forked from the master: drop what belongs to the master (sockets). */
    public function forked(): void;

    /** The master is about to exit. */
    public function stop(): void;
}
