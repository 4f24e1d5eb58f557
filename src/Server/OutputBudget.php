<?php

declare(strict_types=1);

namespace Weft\Server;

use Psr\Log\LoggerInterface;
use Weft\Coroutine\Coroutine;
use Weft\Coroutine\Scheduler;
use Weft\Loop\Driver;

/**
 * What a worker holds of output its peers have not read yet (answers, file chunks, streamed bodies,
 * WebSocket frames), against one budget: a quarter of --memory-limit by default. Each connection
 * already stops at Connection::HIGH_WATER; this bounds their sum, so a crowd of clients that never
 * read cannot take the worker past its memory limit (which would end every request and connection
 * on it).
 *
 * Two marks:
 * - the gate (three quarters of the limit): past it, a producer whose connection still holds unsent
 *   output waits (a streamed body's writer, a file transfer, pipelined requests not yet dispatched)
 *   before it allocates anything more; it is woken, oldest first, once the worker is below the gate.
 *   A connection holding nothing (its client reads everything) goes on: one reader is never held up
 *   by others that do not read.
 * - the limit: output that cannot wait (an answer the application already built) may take the
 *   worker past it, and a connection holding nothing may need room past it; then the connections
 *   whose output has waited longest without a byte read are closed, the worst first, until the
 *   worker is back at the gate, and the log names them.
 *
 * And turns: a producer that has queued Connection::TURN_BYTES without waiting (its peer takes all,
 * as a crowd of new connections does until the kernel's buffers are full) queues for a turn, and a
 * few turns are given per loop iteration, so that the loop polls between them and a bystander's
 * request is answered within milliseconds, not after every producer has filled its socket.
 *
 * The hot path is a counter: Connection::write() adds, Connection::flush() subtracts.
 *
 * @internal one per worker, owned by Connections
 */
final class OutputBudget
{
    /** Closures logged at most once a second, the others counted into the next line (an attack repeats at will). */
    private const LOG_INTERVAL = 1.0;
    /** Victims named in one log line; the rest are counted. */
    private const NAMED = 8;
    /** Producers resumed per loop iteration from the turn queue (each then writes about a chunk). */
    private const TURNS_PER_TICK = 32;

    /** Bytes of output queued (pieces partly sent count whole: that is their memory), summed over the worker's connections. */
    public int $held = 0;
    /** Producers wait past this (while their connection holds unsent output). */
    public readonly int $gate;
    /** @var array<int, Connection> connections waiting for the worker to fall below the gate, oldest first */
    private array $waiting = [];
    private bool $wakeScheduled = false;
    /** What the worker held when a reclaim found no one to close (only the connection asking held output). */
    private int $fruitlessAt = -1;
    /** @var array<int, Coroutine> producers waiting for a turn, in order */
    private array $turns = [];
    private bool $turnsScheduled = false;
    private int $unlogged = 0;
    private float $logged = -\INF;

    /**
     * @param int $limit bytes; 0: no budget (each connection is still bounded by its HIGH_WATER)
     * @param \Closure(): iterable<Connection> $connections the worker's open connections, for choosing whom to close
     */
    public function __construct(
        public readonly int $limit,
        private readonly Driver $driver,
        private readonly LoggerInterface $logger,
        private readonly \Closure $connections,
    ) {
        if ($limit < 0) {
            throw new \InvalidArgumentException('The output budget cannot be negative');
        }
        $this->gate = $limit - \intdiv($limit, 4);
    }

    /** Whether producers that already hold output must wait. */
    public function overGate(): bool
    {
        return $this->limit > 0 && $this->held >= $this->gate;
    }

    /** Whether the worker holds more than it may: someone is to be closed (reclaim()). */
    public function overLimit(): bool
    {
        return $this->limit > 0 && $this->held > $this->limit;
    }

    /** Wakes $connection (Connection::roomFreed()) once the worker is below the gate. */
    public function wait(Connection $connection): void
    {
        $this->waiting[$connection->id] = $connection;
    }

    public function forget(Connection $connection): void
    {
        unset($this->waiting[$connection->id]);
    }

    /**
     * Output was sent or dropped: when the worker is below the gate again, wake the waiting producers
     * from a loop callback of their own, one at a time, each taking its turn before the next is asked.
     */
    public function released(): void
    {
        if ($this->held <= $this->limit) {
            $this->fruitlessAt = -1;
        }
        if ($this->waiting !== [] && !$this->wakeScheduled && $this->held < $this->gate) {
            $this->wakeScheduled = true;
            $this->driver->defer($this->wake(...));
        }
    }

    /**
     * Closes the connections whose output has waited longest without progress, until the worker is
     * back at the gate. $spare (the connection that needs the room now) is never one of them.
     */
    public function reclaim(?Connection $spare): void
    {
        if (!$this->overLimit() || $this->held <= $this->fruitlessAt) {
            return; // nothing to close until more is queued: a large answer to one slow reader is not
                    // looked at again on each of its writable events
        }
        $holders = [];
        $since = [];
        foreach (($this->connections)() as $id => $connection) {
            if ($connection !== $spare && $connection->unsent() > 0 && !$connection->isClosed()) {
                $holders[$id] = $connection;
                $since[$id] = $connection->stalledSince();
            }
        }
        // The longest stalled first (a sort of floats: this runs while an attack goes on, over
        // thousands of connections).
        \asort($since);
        $held = $this->held;
        $now = $this->driver->now();
        $named = [];
        $closed = 0;
        $freed = 0;
        foreach ($since as $id => $_) {
            $connection = $holders[$id];
            if ($this->held <= $this->gate) {
                break;
            }
            $unsent = $connection->unsent();
            $holds = $connection->held();
            if (\count($named) < self::NAMED) {
                $named[] = \sprintf(
                    '#%d %s (%d bytes unsent, none read for %.1f s)',
                    $connection->id,
                    $connection->remoteAddress() ?? 'unix socket',
                    $unsent,
                    \max(0.0, $now - $connection->stalledSince()),
                );
            }
            $connection->close();
            $closed++;
            $freed += $holds;
        }
        if ($closed === 0) {
            $this->fruitlessAt = $this->held; // only $spare holds output: what it needs is in memory already
            return;
        }
        $this->unlogged += $closed;
        $clock = \microtime(true);
        if ($clock - $this->logged < self::LOG_INTERVAL) {
            return;
        }
        $this->logged = $clock;
        $this->logger->warning('Closed {count} connection(s) whose output waited longest unread: the worker held {held} bytes of output queued for clients, over its output budget of {budget} (see --memory-limit); freed {freed} bytes: {named}{more}', [
            'count' => $closed,
            'held' => $held,
            'budget' => $this->limit,
            'freed' => $freed,
            'named' => \implode(', ', $named),
            'more' => $this->unlogged > \count($named) ? \sprintf('; %d closed in all since the last such line', $this->unlogged) : '',
        ]);
        $this->unlogged = 0;
    }

    /** Whether producers are queued for a turn: one that has written anything since its own joins them. */
    public function turnsWaiting(): bool
    {
        return $this->turns !== [];
    }

    /** Suspends the calling producer until its turn comes (a later loop iteration). */
    public function awaitTurn(): void
    {
        $scheduler = Scheduler::get();
        $self = $scheduler->self();
        $this->turns[$self->id] = $self;
        if (!$this->turnsScheduled) {
            $this->turnsScheduled = true;
            $this->driver->defer($this->giveTurns(...));
        }
        $scheduler->await(function () use ($self): void {
            unset($this->turns[$self->id]);
        });
    }

    private function giveTurns(): void
    {
        $batch = [];
        foreach ($this->turns as $id => $coroutine) {
            unset($this->turns[$id]);
            $batch[] = $coroutine;
            if (\count($batch) === self::TURNS_PER_TICK) {
                break;
            }
        }
        // The rest in the next iteration, after the loop has polled; those resumed now that want more
        // queue again behind them.
        $this->turnsScheduled = $this->turns !== [];
        if ($this->turnsScheduled) {
            $this->driver->defer($this->giveTurns(...));
        }
        $scheduler = Scheduler::get();
        foreach ($batch as $coroutine) {
            if ($coroutine->isWaiting()) {
                $scheduler->resume($coroutine);
            }
        }
    }

    private function wake(): void
    {
        $this->wakeScheduled = false;
        while ($this->waiting !== [] && $this->held < $this->gate) {
            $id = \array_key_first($this->waiting);
            $connection = $this->waiting[$id];
            unset($this->waiting[$id]);
            // Runs its producer or its pipelined requests now (a loop callback resumes at once); if it
            // still finds no room, it waits again, at the back.
            $connection->roomFreed();
        }
    }
}
