<?php

declare(strict_types=1);

namespace Weft\Server\Watch;

use Weft\Loop\Driver;

/** How `serve --watch` learns that files changed: inotify through the extension, or polling. */
interface ChangeSource
{
    /**
     * Starts watching from the master's loop; never blocks it.
     *
     * @param \Closure(list<string>): void $onChange told the absolute paths that changed (created,
     *        modified, deleted, renamed), each batch as soon as it is seen
     */
    public function start(Driver $driver, \Closure $onChange): void;

    /** Seconds a change may take to be seen: the debounce waits this much more than its own delay. */
    public function latency(): float;

    /** Files (polling) or directories (inotify) watched now, for the start-up line. */
    public function watched(): int;

    /** "inotify", "polling". */
    public function name(): string;

    public function stop(): void;

    /** In a worker just forked from the master: drop the master's descriptors, touch no watch. */
    public function forked(): void;
}
