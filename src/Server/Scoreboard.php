<?php

declare(strict_types=1);

namespace Weft\Server;

/**
 * One worker's "last request started" slot, in a page of memory it shares with the master (SysV shared
 * memory, created before the fork): a worker that gets stuck the instant a request starts (an endless
 * loop on its first line) never sends another report, so only this tells the master which request
 * it was. A write is a memcpy (tens of nanoseconds), no system call.
 *
 * When a worker stops reporting, the master asks it (SIGWINCH, see Worker::answerWhenStuck()) which
 * request's code is running: the worker answers here, from its signal handler, if its code still runs
 * between opcodes (a loop) rather than in a long C call.
 *
 * Layout: the request's number (8 bytes, 0 when none runs), its description's length (2 bytes), the
 * description; at RUNNING, the request whose code runs (2 bytes of length, the description).
 *
 * @internal
 */
final class Scoreboard
{
    private const SIZE = 1024;
    private const MAX_DESCRIPTION = 500;
    private const RUNNING = 512;

    /** The request number written last, so that ending any other one costs nothing. */
    private int $written = 0;

    private function __construct(private readonly \Shmop $memory)
    {
    }

    /** In the master, before the fork; null without the shmop extension (the reports alone then). */
    public static function create(): ?self
    {
        if (!\function_exists('shmop_open')) {
            return null;
        }
        $memory = @\shmop_open(0, 'c', 0600, self::SIZE); // key 0: IPC_PRIVATE, a segment of our own
        if ($memory === false) {
            return null;
        }
        // Removed at once: it lives while the master and the worker have it attached, no longer,
        // whatever kills them.
        @\shmop_delete($memory);
        return new self($memory);
    }

    /** In the worker: request $number (> 0) has started. */
    public function started(int $number, string $description): void
    {
        if (\strlen($description) > self::MAX_DESCRIPTION) {
            $description = \substr($description, 0, self::MAX_DESCRIPTION - 3) . '...';
        }
        $this->written = $number;
        \shmop_write($this->memory, \pack('Jn', $number, \strlen($description)) . $description, 0);
    }

    /** In the worker: request $number has ended. */
    public function ended(int $number): void
    {
        if ($number === $this->written) {
            $this->written = 0;
            \shmop_write($this->memory, "\0\0\0\0\0\0\0\0", 0);
        }
    }

    /** In the worker, when the master asks: the request whose code runs now ('' for none). */
    public function running(string $description): void
    {
        if (\strlen($description) > self::MAX_DESCRIPTION) {
            $description = \substr($description, 0, self::MAX_DESCRIPTION - 3) . '...';
        }
        \shmop_write($this->memory, \pack('n', \strlen($description)) . $description, self::RUNNING);
    }

    /** In the master: what the worker said runs, null if it did not answer (yet). */
    public function reportedRunning(): ?string
    {
        $length = \unpack('n', \shmop_read($this->memory, self::RUNNING, 2))[1] ?? 0;
        return $length === 0 || $length > self::MAX_DESCRIPTION ? null : \shmop_read($this->memory, self::RUNNING + 2, $length);
    }

    /** In the master: the request the worker started last and has not ended, if any. */
    public function current(): ?string
    {
        $head = \unpack('Jnumber/nlength', \shmop_read($this->memory, 0, 10));
        if ($head === false || $head['number'] === 0 || $head['length'] > self::MAX_DESCRIPTION) {
            return null;
        }
        return \shmop_read($this->memory, 10, $head['length']);
    }
}
