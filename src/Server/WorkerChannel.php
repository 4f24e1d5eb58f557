<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\Loop\Driver;

/**
 * The worker's end of its channel to the master: typed messages out (one JSON object per line, with the
 * "type" the master reads: ready, stats, draining, boot-failed), and the master's going away in. Writes
 * go through a buffer and the loop like any connection's, so a master that is slow to read delays a
 * message but never truncates one.
 *
 * @internal
 */
final class WorkerChannel
{
    private string $out = '';
    private ?string $writeWatcher = null;
    private ?string $readWatcher = null;
    private bool $closed = false;

    /** @param resource $stream the worker's end of the socket pair, non-blocking */
    public function __construct(private readonly mixed $stream, private readonly Driver $driver)
    {
    }

    /** @param array<string, mixed> $fields */
    public function send(string $type, array $fields = []): void
    {
        if ($this->closed) {
            return;
        }
        $this->out .= \json_encode(['type' => $type] + $fields, \JSON_THROW_ON_ERROR | \JSON_INVALID_UTF8_SUBSTITUTE) . "\n";
        $this->flush();
    }

    /** Writes what is queued before the process exits, waiting at most a second for the master to read. */
    public function flushNow(): void
    {
        $deadline = \hrtime(true) + 1_000_000_000;
        while (!$this->closed && $this->out !== '' && \hrtime(true) < $deadline) {
            $written = @\fwrite($this->stream, $this->out);
            \error_clear_last();
            if ($written === false) {
                return; // the master is gone
            }
            $this->out = (string) \substr($this->out, $written);
            if ($this->out !== '') {
                $read = $except = null;
                $write = [$this->stream];
                @\stream_select($read, $write, $except, 0, 100_000);
            }
        }
    }

    /**
     * Calls $onGone once when the master's end closes (the master died): the worker then stops rather
     * than lingers. What the master sends is ignored (it sends nothing yet).
     *
     * @param \Closure(): void $onGone
     */
    public function watch(\Closure $onGone): void
    {
        $this->readWatcher = $this->driver->onReadable($this->stream, function () use ($onGone): void {
            $data = @\fread($this->stream, 8192);
            \error_clear_last();
            if (($data === '' || $data === false) && \feof($this->stream)) {
                $this->close();
                $onGone();
            }
        });
        // The channel alone must not keep the worker's loop running.
        $this->driver->unreference($this->readWatcher);
    }

    private function flush(): void
    {
        $written = @\fwrite($this->stream, $this->out);
        \error_clear_last();
        if ($written === false) {
            $written = 0;
        }
        $this->out = (string) \substr($this->out, $written);
        if ($this->out === '') {
            if ($this->writeWatcher !== null) {
                $this->driver->disable($this->writeWatcher);
            }
            return;
        }
        if ($this->writeWatcher === null) {
            $this->writeWatcher = $this->driver->onWritable($this->stream, fn () => $this->flush());
            $this->driver->unreference($this->writeWatcher);
        } else {
            $this->driver->enable($this->writeWatcher);
        }
    }

    private function close(): void
    {
        $this->closed = true;
        $this->out = '';
        foreach ([$this->readWatcher, $this->writeWatcher] as $watcher) {
            if ($watcher !== null) {
                $this->driver->cancel($watcher);
            }
        }
    }
}
