<?php

declare(strict_types=1);

namespace Weft\Coroutine;

use Weft\Loop\Driver;

/**
 * The one wait primitive for streams: wait until a stream is readable or writable, with an optional
 * timeout, suspending only the calling coroutine. Outside of any coroutine the same call runs the loop
 * until the stream is ready ({main} waits like a coroutine), whichever loop backend is in use.
 *
 * One watcher and one time limit (TimeLimit) per direction are created on first use and then only
 * enabled and disabled, so a connection's thousandth wait costs no more allocation than its first. A
 * wait that runs out of time ends with Timeout (no token: the wait's own, not a Weft\timeout()'s).
 */
final class IoWaiter
{
    private readonly Scheduler $scheduler;
    private readonly Driver $driver;
    private ?string $readWatcher = null;
    private ?string $writeWatcher = null;
    private ?Coroutine $reader = null;
    private ?Coroutine $writer = null;
    private ?\Closure $cancelRead = null;
    private ?\Closure $cancelWrite = null;
    /** The time limits of reads and of writes: lazy, one timer for many waits (TimeLimit). */
    private ?TimeLimit $readLimit = null;
    private ?TimeLimit $writeLimit = null;
    private bool $closed = false;

    /** @param resource $stream */
    public function __construct(private readonly mixed $stream)
    {
        $this->scheduler = Scheduler::get();
        $this->driver = $this->scheduler->driver;
    }

    /** @throws Timeout when $timeout seconds pass first */
    public function readable(?float $timeout = null): void
    {
        $current = $this->scheduler->self();
        if ($this->reader !== null) {
            throw ConcurrentUse::stream('read', $this->reader, $current);
        }
        if ($this->closed) {
            return;
        }
        if ($this->readWatcher === null) {
            $this->readWatcher = $this->driver->onReadable($this->stream, $this->wakeReader(...));
        } else {
            $this->driver->enable($this->readWatcher);
        }
        $this->reader = $current;
        $limit = $this->readLimit ??= new TimeLimit($this->scheduler, false);
        try {
            $woken = $limit->await($timeout ?? -1.0, $this->cancelRead ??= $this->disableRead(...));
        } finally {
            $this->reader = null;
        }
        if ($woken === false) {
            $this->disableRead();
            throw Timeout::after((float) $timeout, 'Read');
        }
    }

    /** @throws Timeout when $timeout seconds pass first */
    public function writable(?float $timeout = null): void
    {
        $current = $this->scheduler->self();
        if ($this->writer !== null) {
            throw ConcurrentUse::stream('write', $this->writer, $current);
        }
        if ($this->closed) {
            return;
        }
        if ($this->writeWatcher === null) {
            $this->writeWatcher = $this->driver->onWritable($this->stream, $this->wakeWriter(...));
        } else {
            $this->driver->enable($this->writeWatcher);
        }
        $this->writer = $current;
        $limit = $this->writeLimit ??= new TimeLimit($this->scheduler, false);
        try {
            $woken = $limit->await($timeout ?? -1.0, $this->cancelWrite ??= $this->disableWrite(...));
        } finally {
            $this->writer = null;
        }
        if ($woken === false) {
            $this->disableWrite();
            throw Timeout::after((float) $timeout, 'Write');
        }
    }

    /** Whether a coroutine is waiting to read (for stats and idle sweeps). */
    public function isReading(): bool
    {
        return $this->reader !== null;
    }

    /**
     * Drops the watchers. Must be called before the stream is closed; a coroutine still waiting is woken
     * (it then finds the stream closed).
     */
    public function close(): void
    {
        if ($this->closed) {
            return;
        }
        $this->closed = true;
        if ($this->readWatcher !== null) {
            $this->driver->cancel($this->readWatcher);
        }
        if ($this->writeWatcher !== null) {
            $this->driver->cancel($this->writeWatcher);
        }
        $this->readLimit?->drop();
        $this->writeLimit?->drop();
        foreach ([$this->reader, $this->writer] as $waiter) {
            if ($waiter !== null && $waiter->isWaiting()) {
                $this->scheduler->resume($waiter);
            }
        }
    }

    private function wakeReader(): void
    {
        $this->driver->disable($this->readWatcher);
        $reader = $this->reader;
        if ($reader !== null && $reader->isWaiting()) {
            $this->scheduler->resume($reader);
        }
    }

    private function wakeWriter(): void
    {
        $this->driver->disable($this->writeWatcher);
        $writer = $this->writer;
        if ($writer !== null && $writer->isWaiting()) {
            $this->scheduler->resume($writer);
        }
    }

    private function disableRead(): void
    {
        if ($this->readWatcher !== null && !$this->closed) {
            $this->driver->disable($this->readWatcher);
        }
    }

    private function disableWrite(): void
    {
        if ($this->writeWatcher !== null && !$this->closed) {
            $this->driver->disable($this->writeWatcher);
        }
    }
}
