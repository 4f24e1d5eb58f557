<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\Loop\Driver;
use Weft\Socket\Errno;
use Weft\Socket\LineSplitter;
use Weft\Socket\LineTooLong;

/**
 * The channel between the master and one worker, the same class at both ends of their socket pair:
 * typed messages (WorkerMessage) framed as lines by the one LineSplitter, non-blocking through each
 * side's loop, with bounded buffers both ways.
 *
 * - Out: send() queues a frame and writes what the socket takes; the rest goes from a writable
 *   callback, so a master slow to read delays a message but never truncates one. While more than
 *   MAX_QUEUED bytes wait, a periodic report is dropped (the next one replaces it); the others are kept.
 * - In: a readable callback reads what is there and hands every complete frame, decoded and checked,
 *   to the listener. A frame that is not a known message, or longer than MAX_MESSAGE, is a
 *   MalformedMessage for the listener's fault callback: reading stops there (what follows cannot be
 *   trusted to be in step) and the process at the other end is the one at fault, never this one.
 * - The end of the stream (the other process is gone) is reported once.
 *
 * The workers' messages are the only kinds there are: the master tells its workers what to do with
 * signals (SIGTERM stop, SIGUSR1 reopen logs), which an operator can send as well.
 *
 * @internal
 */
final class WorkerChannel
{
    /** The longest frame accepted (a report with many running requests and hook figures is a few KB). */
    public const MAX_MESSAGE = 1 << 20;
    /** Unsent bytes above which periodic reports are dropped. */
    public const MAX_QUEUED = 4 << 20;
    private const READ_CHUNK = 65536;

    private string $in = '';
    /** Bytes at the front of $in known to hold no line break: a long frame is scanned once. */
    private int $scanned = 0;
    private string $out = '';
    private ?string $readWatcher = null;
    private ?string $writeWatcher = null;
    private bool $closed = false;
    /** Set on a fault or at the end of the stream: nothing more is read. */
    private bool $deaf = false;
    private readonly LineSplitter $frames;
    /** @var null|\Closure(WorkerMessage): void */
    private ?\Closure $onMessage = null;
    /** @var null|\Closure(MalformedMessage): void */
    private ?\Closure $onFault = null;
    /** @var null|\Closure(): void */
    private ?\Closure $onClosed = null;

    /** @param resource $stream this process's end of the socket pair */
    public function __construct(private readonly mixed $stream, private readonly Driver $driver, int $maxMessage = self::MAX_MESSAGE)
    {
        \stream_set_blocking($stream, false);
        // PHP's own read buffer would hide bytes from the readable watcher.
        \stream_set_read_buffer($stream, 0);
        $this->frames = new LineSplitter($maxMessage);
    }

    public function send(WorkerMessage $message): void
    {
        if ($this->closed) {
            return;
        }
        if (\strlen($this->out) > self::MAX_QUEUED && $message->isSuperseded()) {
            return;
        }
        $this->out .= $message->encode() . "\n";
        $this->flush();
    }

    /**
     * Starts reading through the loop. The watcher is unreferenced: the channel alone never keeps a
     * process's loop running.
     *
     * @param \Closure(WorkerMessage): void $onMessage every message, in order
     * @param \Closure(MalformedMessage): void $onFault once, for the first frame that is not a message
     * @param \Closure(): void $onClosed once, when the other end has closed (its process is gone)
     */
    public function listen(\Closure $onMessage, \Closure $onFault, \Closure $onClosed): void
    {
        $this->onMessage = $onMessage;
        $this->onFault = $onFault;
        $this->onClosed = $onClosed;
        if ($this->readWatcher === null && !$this->closed) {
            $this->readWatcher = $this->driver->onReadable($this->stream, fn () => $this->receive());
            $this->driver->unreference($this->readWatcher);
        }
    }

    /**
     * Reads what is waiting now and delivers it: the readable callback, and the master's look before it
     * judges a worker silent or reaps it (its last words may be unread).
     */
    public function receive(): void
    {
        // At most a few chunks a call: a flood from one worker must not hold the master's loop.
        for ($chunks = 0; $chunks < 16 && !$this->deaf && !$this->closed; $chunks++) {
            $data = @\fread($this->stream, self::READ_CHUNK);
            \error_clear_last();
            if ($data === '' || $data === false) {
                if (\feof($this->stream)) {
                    $this->gone();
                }
                return;
            }
            $this->in .= $data;
            $this->deliver();
            if (\strlen($data) < self::READ_CHUNK) {
                return; // most likely all there was
            }
        }
    }

    private function deliver(): void
    {
        while (!$this->deaf) {
            try {
                $frame = $this->frames->take($this->in, $this->scanned);
            } catch (LineTooLong) {
                $this->fault(MalformedMessage::because(\sprintf('a frame longer than %d bytes', $this->frames->maxLength)));
                return;
            }
            if ($frame === null) {
                $this->scanned = \strlen($this->in);
                return;
            }
            $this->scanned = 0;
            try {
                $message = WorkerMessage::decode($frame);
            } catch (MalformedMessage $e) {
                $this->fault($e);
                return;
            }
            if ($this->onMessage !== null) {
                ($this->onMessage)($message);
            }
        }
    }

    /**
     * Writes what is queued before the process exits, waiting at most a second for the other end to
     * read. The one blocking write: it runs after the loop has stopped (or from its last callback,
     * before exit()), when nothing else is left to serve.
     */
    public function flushNow(): void
    {
        $deadline = \hrtime(true) + 1_000_000_000;
        while (!$this->closed && $this->out !== '' && \hrtime(true) < $deadline) {
            $written = @\fwrite($this->stream, $this->out);
            \error_clear_last();
            if ($written === false) {
                return; // the other end is gone
            }
            $this->out = (string) \substr($this->out, $written);
            if ($this->out !== '') {
                $read = $except = null;
                $write = [$this->stream];
                @\stream_select($read, $write, $except, 0, 100_000);
            }
        }
    }

    /** Unsent bytes (for tests and the bound). */
    public function queued(): int
    {
        return \strlen($this->out);
    }

    public function close(): void
    {
        if ($this->closed) {
            return;
        }
        $this->closed = true;
        $this->out = '';
        $this->stopReading();
        if ($this->writeWatcher !== null) {
            $this->driver->cancel($this->writeWatcher);
            $this->writeWatcher = null;
        }
        if (\is_resource($this->stream)) {
            @\fclose($this->stream);
        }
    }

    /**
     * In a process forked from the owner of this end: closes the inherited descriptor only. The loop's
     * watchers are the parent's (with epoll, an inherited instance is shared with it: cancelling here
     * would unregister the parent's descriptors).
     */
    public function closeInChild(): void
    {
        $this->closed = true;
        if (\is_resource($this->stream)) {
            @\fclose($this->stream);
        }
    }

    /** The other end has closed: nothing more to read or write; told once. */
    private function gone(): void
    {
        if ($this->closed) {
            return;
        }
        $this->close();
        ($this->onClosed ?? static fn () => null)();
    }

    private function fault(MalformedMessage $e): void
    {
        $this->stopReading();
        ($this->onFault ?? static fn () => null)($e);
    }

    private function stopReading(): void
    {
        $this->deaf = true;
        $this->in = '';
        $this->scanned = 0;
        if ($this->readWatcher !== null) {
            $this->driver->cancel($this->readWatcher);
            $this->readWatcher = null;
        }
    }

    private function flush(): void
    {
        if ($this->closed) {
            return;
        }
        $written = @\fwrite($this->stream, $this->out);
        if ($written === false) {
            [$errno] = Errno::fromWarning(\error_get_last()['message'] ?? null);
            \error_clear_last();
            if ($errno !== 11) {
                $this->gone(); // EPIPE, ECONNRESET: the other process has ended
                return;
            }
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
}
