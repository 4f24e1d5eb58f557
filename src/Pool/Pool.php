<?php

declare(strict_types=1);

namespace Weft\Pool;

use Closure;
use Weft\Coroutine\Channel;
use Weft\Coroutine\ChannelClosed;
use Weft\Loop\Loop;

/**
 * A pool of connections of any kind, made by a factory closure.
 *
 * - At most `max` connections exist (in use, idle and being opened). The first borrow opens up to `min`
 *   of them; idle eviction never goes below `min`.
 * - In a coroutine, borrow() waits when all are in use: waiters are served first come, first served, and a
 *   released connection goes straight to the longest waiter (no one can overtake it). After
 *   borrowTimeout the waiter gets PoolExhausted.
 * - Outside of any coroutine (sync mode) nothing else could release a connection while we wait, so
 *   borrow() never waits: it opens one up to `max`, else throws PoolExhausted at once.
 * - Idle connections are reused most-recently-released first, so a surplus after a burst ages and is
 *   closed by idle eviction, which runs lazily on borrow and release: the pool owns no timer and never
 *   keeps the loop alive.
 * - A connection idle longer than checkAfterIdle is checked before it is handed out; a failed check
 *   (false or an exception) discards it and the borrow tries the next one or opens a new one.
 * - A connection discarded (or found unusable on release) is closed and never handed out again; its
 *   slot goes to the longest waiter, who opens a new connection.
 *
 * Every bookkeeping change is made before a callback runs, because connect, check and close may suspend
 * the calling coroutine and let others use the pool meanwhile.
 *
 * @template T of object
 */
final class Pool
{
    /**
     * Attempts on fresh connections after the first failure, while each failure is safe to retry (the
     * command never left this process). One is the common case; the others cover a server that still
     * accepts connections and drops them while it shuts down for a restart: they wait a little first
     * (RETRY_PAUSE, doubling), so that the old server is gone by then and the connect waits for the new one.
     */
    private const MAX_NOT_SENT_RETRIES = 4;
    private const RETRY_PAUSE = 0.05;

    private readonly PoolOptions $options;
    /** @var array<int, array{T, float}> idle connections and when each was released, oldest first */
    private array $idle = [];
    private int $idleKey = 0;
    /** @var array<int, T> by spl_object_id; holding them keeps the ids from being reused */
    private array $borrowed = [];
    /** @var array<int, Channel> waiting borrowers in arrival order */
    private array $waiters = [];
    private int $waiterKey = 0;
    /** Connections open or being opened: in use + idle + connecting. */
    private int $total = 0;
    private int $connecting = 0;
    private int $created = 0;
    private int $discarded = 0;
    private int $evicted = 0;
    private int $timeouts = 0;
    private bool $closed = false;

    /**
     * @param Closure(): T $connect opens a connection; its exception reaches the borrower
     * @param Closure(T): void $close closes one (exceptions are ignored: it is going away anyway)
     * @param null|Closure(T): bool $check health check (may do I/O) for a connection idle longer than checkAfterIdle
     * @param null|Closure(T): bool $reusable asked on release, without I/O: false closes the connection
     *        instead of pooling it (e.g. the client already knows its stream is dead or out of sync)
     */
    public function __construct(
        private readonly Closure $connect,
        private readonly Closure $close,
        private readonly ?Closure $check = null,
        ?PoolOptions $options = null,
        private readonly ?Closure $reusable = null,
    ) {
        $this->options = $options ??= PoolOptions::defaults();
        if ($options->min > $options->max) {
            throw new \InvalidArgumentException(\sprintf(
                'The minimum pool size (%d) exceeds the maximum (%d)',
                $options->min,
                $options->max,
            ));
        }
    }

    public function options(): PoolOptions
    {
        return $this->options;
    }

    /**
     * Hands out a connection for the caller's exclusive use until release() or discard().
     *
     * @param null|float $timeout how long to wait in a coroutine; null: the options' borrowTimeout
     * @return T
     * @throws PoolExhausted|PoolClosed, or what the connect closure threw
     */
    public function borrow(?float $timeout = null): object
    {
        return $this->acquire($timeout, false);
    }

    /** Gives a borrowed connection back: to the longest waiter if any, else to the idle set. */
    public function release(object $connection): void
    {
        $this->takeBack($connection, 'release');
        if ($this->closed || ($this->reusable !== null && !$this->isReusable($connection))) {
            if (!$this->closed) {
                $this->discarded++;
            }
            $this->destroy($connection);
            return;
        }
        $this->park($connection);
    }

    /** Closes a borrowed connection that turned out broken; it is never handed out again. */
    public function discard(object $connection): void
    {
        $this->takeBack($connection, 'discard');
        $this->discarded++;
        $this->destroy($connection);
    }

    /**
     * Borrows a connection, runs $task with it and releases it. When $task throws a BrokenConnection the
     * connection is discarded, and while the exception says it is safe to retry (nothing was sent), $task runs again, at most four times, on a
     * freshly opened connection (a second idle one may well be broken the same way, e.g. after a server
     * restart), the later attempts after a short pause. Any other exception releases the connection and propagates.
     *
     * @template R
     * @param Closure(T): R $task
     * @return R
     */
    public function use(Closure $task): mixed
    {
        $connection = $this->borrow();
        try {
            $result = $task($connection);
        } catch (BrokenConnection $e) {
            $this->discardIfBorrowed($connection);
            if (!$e->isSafeToRetry()) {
                throw $e;
            }
            return $this->retry($task);
        } catch (\Throwable $e) {
            $this->releaseIfBorrowed($connection);
            throw $e;
        }
        $this->release($connection);
        return $result;
    }

    /**
     * @return array{in_use: int, idle: int, waiting: int, total: int, connecting: int, created: int,
     *               discarded: int, evicted: int, timeouts: int, min: int, max: int, closed: bool}
     */
    public function stats(): array
    {
        return [
            'in_use' => \count($this->borrowed),
            'idle' => \count($this->idle),
            'waiting' => \count($this->waiters),
            'total' => $this->total,
            'connecting' => $this->connecting,
            'created' => $this->created,
            'discarded' => $this->discarded,
            'evicted' => $this->evicted,
            'timeouts' => $this->timeouts,
            'min' => $this->options->min,
            'max' => $this->options->max,
            'closed' => $this->closed,
        ];
    }

    /**
     * Closes the idle connections and refuses further borrows (PoolClosed), also to those waiting now.
     * Connections in use are closed when they are released.
     */
    public function close(): void
    {
        if ($this->closed) {
            return;
        }
        $this->closed = true;
        $waiters = $this->waiters;
        $this->waiters = [];
        foreach ($waiters as $waiter) {
            $waiter->close();
        }
        $idle = $this->idle;
        $this->idle = [];
        foreach ($idle as [$connection]) {
            $this->destroy($connection);
        }
    }

    public function isClosed(): bool
    {
        return $this->closed;
    }

    /** @return T */
    private function acquire(?float $timeout, bool $fresh): object
    {
        if ($this->closed) {
            throw PoolClosed::borrow();
        }
        $this->evictIdle();

        while (!$fresh && $this->idle !== []) {
            $key = \array_key_last($this->idle);
            [$connection, $since] = $this->idle[$key];
            unset($this->idle[$key]);
            $this->borrowed[\spl_object_id($connection)] = $connection;
            if ($this->check === null || self::now() - $since <= $this->options->checkAfterIdle) {
                return $connection;
            }
            if ($this->passesCheck($connection)) {
                if ($this->closed) {
                    $this->takeBack($connection, 'release');
                    $this->destroy($connection);
                    throw PoolClosed::borrow();
                }
                return $connection;
            }
            // Failed: gone for good. The slot stays ours, so the loop may open a new connection.
            unset($this->borrowed[\spl_object_id($connection)]);
            $this->discarded++;
            $this->total--;
            $this->closeQuietly($connection);
        }

        if ($fresh && $this->total >= $this->options->max && $this->idle !== []) {
            // Make room for a new connection by closing the longest-idle one.
            $key = \array_key_first($this->idle);
            $connection = $this->idle[$key][0];
            unset($this->idle[$key]);
            $this->total--;
            $this->evicted++;
            $this->closeQuietly($connection);
        }

        if ($this->total < $this->options->max) {
            $this->total++;
            $connection = $this->open();
            $this->warmUp();
            return $connection;
        }

        if (\Weft\current() === null) {
            throw PoolExhausted::withoutWaiting($this->options->max, \count($this->borrowed), \count($this->waiters));
        }
        return $this->wait($timeout ?? $this->options->borrowTimeout);
    }

    /**
     * Waits for a released connection or for a free slot. The release side sends into a one-value
     * channel; the timer closes it, which is how a timeout is told apart from any other exception thrown
     * into this coroutine (an outer timeout, a cancel).
     *
     * @return T
     */
    private function wait(float $timeout): object
    {
        $channel = new Channel(1);
        $key = $this->waiterKey++;
        $this->waiters[$key] = $channel;
        $timer = Loop::delay($timeout, function () use ($channel, $key): void {
            unset($this->waiters[$key]);
            $channel->close();
        });
        try {
            $grant = $channel->receive();
        } catch (ChannelClosed $e) {
            if ($this->closed) {
                throw PoolClosed::whileWaiting();
            }
            $this->timeouts++;
            throw PoolExhausted::afterWaiting(
                $timeout,
                $this->options->max,
                \count($this->borrowed),
                \count($this->waiters),
            );
        } catch (\Throwable $e) {
            // Cancelled from outside. Whatever was handed to us meanwhile goes to the next in line.
            unset($this->waiters[$key]);
            if (\count($channel) > 0) {
                $this->giveAway($channel->receive());
            }
            throw $e;
        } finally {
            Loop::cancel($timer);
        }
        if ($grant === true) {
            // A slot was freed for us (total already counts it): open a connection in it.
            return $this->open();
        }
        return $grant;
    }

    /** @param true|T $grant */
    private function giveAway(object|bool $grant): void
    {
        if ($grant === true) {
            $this->total--;
            $this->offerSlot();
            return;
        }
        $this->park($grant);
    }

    /**
     * Opens a connection in a slot the caller has already counted in $total.
     *
     * @return T
     */
    private function open(): object
    {
        $this->connecting++;
        try {
            $connection = ($this->connect)();
        } catch (\Throwable $e) {
            $this->connecting--;
            $this->total--;
            $this->offerSlot();
            throw $e;
        }
        $this->connecting--;
        $this->created++;
        if (!\is_object($connection)) {
            $this->total--;
            $this->offerSlot();
            throw new \TypeError('The pool\'s connect closure must return an object, got ' . \get_debug_type($connection));
        }
        if ($this->closed) {
            $this->total--;
            $this->closeQuietly($connection);
            throw PoolClosed::borrow();
        }
        $this->borrowed[\spl_object_id($connection)] = $connection;
        return $connection;
    }

    /** Brings the pool up to `min` after a borrow opened a connection. Failures here are not the borrower's. */
    private function warmUp(): void
    {
        while (!$this->closed && $this->total < $this->options->min) {
            $this->total++;
            try {
                $connection = $this->open();
            } catch (\Throwable) {
                return;
            }
            $this->park($connection);
        }
    }

    /** A usable connection goes to the first waiter (staying borrowed, by them now), else to the idle set. */
    private function park(object $connection): void
    {
        $id = \spl_object_id($connection);
        while ($this->waiters !== []) {
            $key = \array_key_first($this->waiters);
            $waiter = $this->waiters[$key];
            unset($this->waiters[$key]);
            if (!$waiter->isClosed()) {
                $this->borrowed[$id] = $connection;
                $waiter->send($connection);
                return;
            }
        }
        unset($this->borrowed[$id]);
        $this->idle[$this->idleKey++] = [$connection, self::now()];
        $this->evictIdle();
    }

    /** A slot was freed ($total decremented): let the first waiter open a connection in it. */
    private function offerSlot(): void
    {
        if ($this->closed || $this->total >= $this->options->max) {
            return;
        }
        while ($this->waiters !== []) {
            $key = \array_key_first($this->waiters);
            $waiter = $this->waiters[$key];
            unset($this->waiters[$key]);
            if (!$waiter->isClosed()) {
                $this->total++;
                $waiter->send(true);
                return;
            }
        }
    }

    /** Closes connections idle longer than idleTimeout (the oldest first), keeping at least `min`. */
    private function evictIdle(): void
    {
        if ($this->idle === []) {
            return;
        }
        $limit = self::now() - $this->options->idleTimeout;
        while ($this->total > $this->options->min && $this->idle !== []) {
            $key = \array_key_first($this->idle);
            [$connection, $since] = $this->idle[$key];
            if ($since >= $limit) {
                return;
            }
            unset($this->idle[$key]);
            $this->total--;
            $this->evicted++;
            $this->closeQuietly($connection);
        }
    }

    /** @return T */
    private function retry(Closure $task): mixed
    {
        // A fresh connection can itself die before the command leaves (a server that is restarting
        // accepts, then drops it). A command that was never sent may be tried again: a few more times.
        for ($attempt = 1; ; $attempt++) {
            if ($attempt > 1) {
                \Weft\sleep(self::RETRY_PAUSE * 2 ** ($attempt - 2)); // 0.05, 0.1, 0.2 s
            }
            $connection = $this->acquire(null, true);
            try {
                $result = $task($connection);
                break;
            } catch (BrokenConnection $e) {
                $this->discardIfBorrowed($connection);
                if ($attempt < self::MAX_NOT_SENT_RETRIES && $e->isSafeToRetry()) {
                    continue;
                }
                throw $e;
            } catch (\Throwable $e) {
                $this->releaseIfBorrowed($connection);
                throw $e;
            }
        }
        $this->release($connection);
        return $result;
    }

    private function takeBack(object $connection, string $what): void
    {
        $id = \spl_object_id($connection);
        if (($this->borrowed[$id] ?? null) !== $connection) {
            throw new \Error(\sprintf(
                'Cannot %s a %s that is not borrowed from this pool (never borrowed, or already released)',
                $what,
                \get_debug_type($connection),
            ));
        }
        unset($this->borrowed[$id]);
    }

    /** Closes a connection that has left every list, and offers its slot. */
    private function destroy(object $connection): void
    {
        $this->total--;
        $this->closeQuietly($connection);
        $this->offerSlot();
    }

    /** For use(): the task may have released or discarded the connection itself. */
    private function releaseIfBorrowed(object $connection): void
    {
        if (isset($this->borrowed[\spl_object_id($connection)])) {
            $this->release($connection);
        }
    }

    private function discardIfBorrowed(object $connection): void
    {
        if (isset($this->borrowed[\spl_object_id($connection)])) {
            $this->discard($connection);
        }
    }

    private function passesCheck(object $connection): bool
    {
        try {
            return ($this->check)($connection) === true;
        } catch (\Throwable) {
            return false;
        }
    }

    private function isReusable(object $connection): bool
    {
        try {
            return ($this->reusable)($connection) === true;
        } catch (\Throwable) {
            return false;
        }
    }

    private function closeQuietly(object $connection): void
    {
        try {
            ($this->close)($connection);
        } catch (\Throwable) {
            // Closing a broken connection may fail; it is gone either way.
        }
    }

    private static function now(): float
    {
        return \hrtime(true) / 1e9;
    }
}
