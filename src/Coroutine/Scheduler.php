<?php

declare(strict_types=1);

namespace Weft\Coroutine;

use Weft\Loop\Driver;
use Weft\Loop\Loop;

/**
 * Runs coroutines on pooled Fibers on top of the loop. The only place that calls Fiber::suspend().
 *
 * - go() starts the coroutine at once (like Swoole's go()): it runs until its first wait, then the caller
 *   continues. Creating a Fiber maps a C stack (~8 us), so finished Fibers return to an idle pool and run
 *   the next coroutine: spawning costs little more than a switch.
 * - Wake-ups requested from inside a coroutine are queued and run by the loop (never nested), so a
 *   coroutine is only ever resumed from the loop's context or from go().
 * - {main} (code outside of any coroutine) waits like a coroutine does, through the same await(): its
 *   wait runs the loop until the awaited event arrives (as in revolt/event-loop). There is no second,
 *   blocking way to wait; a wait from inside a loop callback, which could never return, is an error.
 *
 * No `finally` on a path every request or every wait runs (here, the server's dispatch and sessions, the
 * hooked waits): catch, clean up, rethrow, and clean up again after the try. PHP 8.2's tracing JIT does
 * not compile a function that holds a finally block (its FAST_CALL/FAST_RET opcodes), so the function
 * stays interpreted: measured with callgrind (scripts/jit-finally.php), a small function costs 781
 * instructions per call with finally under the JIT (the interpreter: 795) and 341 with catch-and-rethrow.
 * Elsewhere (start-up, tests, rare paths) finally is the clearer way and is welcome.
 *
 * @internal Use the functions in Weft\ and the classes of this namespace.
 */
final class Scheduler
{
    /** Fibers map two kernel mappings each (stack + guard page); vm.max_map_count is 65,530 by default. */
    public const DEFAULT_MAX_COROUTINES = 30_000;
    /**
     * Idle Fibers kept at least; beyond that, as many as coroutines were live at the peak since the last
     * trimIdle(), so a load of N concurrent requests (arriving in bursts of N) never pays for creating
     * and unmapping a Fiber (~8 us each) once warm. trimIdle() gives back what a past spike left.
     */
    private const MIN_IDLE_FIBERS = 512;
    /** Resumes run per loop tick before the loop gets a turn to look at I/O and timers. */
    private const RUN_BUDGET = 4096;

    private static ?self $instance = null;

    /**
     * The coroutine running now (null: {main} or a loop callback). Untyped, as the other properties written
     * at every start of a coroutine (nested, peakLive, nextId): see the note in Coroutine on what a typed
     * property costs per assignment under the JIT.
     *
     * @var ?Coroutine
     */
    public $current = null;
    /** @var list<\Fiber> */
    private array $idle = [];
    /** @var list<array{Coroutine, \Fiber, mixed, ?\Throwable}> */
    private array $ready = [];
    private bool $runScheduled = false;
    /** Wake-ups of the batch runReady() is working through that it has not run yet. */
    private int $batchLeft = 0;
    /**
     * Coroutines running now whose caller goes on once they wait (a go() from anywhere, a resume() by a
     * callback that may do more afterwards): code outside the loop's bookkeeping is then owed a turn.
     */
    /** @var int */
    private $nested = 0;
    /**
     * The coroutine each pooled Fiber runs now (null while it idles), by the Fiber's spl_object_id: what
     * live() lists. Every Fiber's entry is made once, when it is created; a coroutine's start and end only
     * overwrite it (no hash insert and delete per request, ~300 instructions under the tracing JIT with
     * an array of the live coroutines by id).
     *
     * @var array<int, ?Coroutine>
     */
    private array $onFiber = [];
    /** @var int coroutines started and not yet finished (untyped: written at every start and end) */
    private $liveCount = 0;
    private int $fibers = 0;
    /** @var int */
    private $peakLive = 0;
    /** @var int */
    private $nextId = 1;
    private int $maxCoroutines = self::DEFAULT_MAX_COROUTINES;
    private ?\Closure $uncaughtHandler = null;
    private ?Context $rootContext = null;
    /** Stands for {main} in wait queues, timers and cancellation; never has a Fiber. */
    private ?Coroutine $main = null;
    private mixed $mainValue = null;
    /** The followed process-wide values (ProcessState) in place now; null until a coroutine is bound to a set. */
    private ?StateSet $installed = null;
    /** @var array<int, \Closure(): void> whenIdle()'s callbacks by owner: run when the worker is about to have nothing to run */
    private array $onIdle = [];
    private ?\Throwable $mainError = null;

    private function __construct(public readonly Driver $driver)
    {
    }

    /** The scheduler of the current loop driver: a fresh one whenever the loop was reset (after fork). */
    public static function get(): self
    {
        $driver = Loop::get();
        $instance = self::$instance;
        if ($instance === null || $instance->driver !== $driver) {
            $instance = self::$instance = new self($driver);
        }
        return $instance;
    }

    public function setMaxCoroutines(int $max): void
    {
        if ($max < 1) {
            throw new \InvalidArgumentException('The coroutine limit must be at least 1');
        }
        $this->maxCoroutines = $max;
    }

    public function maxCoroutines(): int
    {
        return $this->maxCoroutines;
    }

    /** @param null|\Closure(\Throwable, int): void $handler called for a failure nobody joined, with the coroutine's id */
    public function setUncaughtHandler(?\Closure $handler): void
    {
        $this->uncaughtHandler = $handler;
    }

    /**
     * Starts $task in a coroutine of its own, at once: it runs until its first wait.
     *
     * @param \Closure $task untyped: a class type is checked through zend_check_user_type_slow on every
     *        call (~60 instructions), and every request starts here; go() and the server pass closures
     */
    public function spawn($task, array $args = []): Coroutine
    {
        if ($this->liveCount >= $this->maxCoroutines) {
            throw TooManyCoroutines::limit($this->maxCoroutines);
        }
        $parent = $this->current;
        $fiber = \array_pop($this->idle);
        $pooled = $fiber !== null; // a pooled Fiber waits in fiberMain(): resumed, not started
        if (!$pooled) {
            try {
                $fiber = new \Fiber($this->fiberMain(...));
                $this->fibers++;
            } catch (\Throwable $e) {
                throw TooManyCoroutines::allocation($e, $this->liveCount);
            }
        }
        // Every request starts here: no call that can be spared (the root context is read in place).
        $coroutine = new Coroutine($this->nextId++, $task, $args, $parent !== null ? $parent->context() : ($this->rootContext ??= new Context(null)), $fiber);
        $live = ++$this->liveCount;
        if ($live > $this->peakLive) {
            $this->peakLive = $live;
        }
        // A coroutine started by a bound one works for the same owner: it sees the same followed state.
        $coroutine->state = ($parent ?? $this->main)?->state;
        $coroutine->outputBase = \ob_get_level();
        $coroutine->startedAt = $this->driver->now();
        $this->current = $coroutine;
        ++$this->nested;
        // Every request comes through here: no finally (see the class docblock).
        try {
            if ($pooled) {
                $fiber->resume($coroutine);
            } else {
                $fiber->start($coroutine, \spl_object_id($fiber));
            }
        } catch (\Throwable $e) {
            --$this->nested;
            $this->current = $parent;
            throw $e;
        }
        --$this->nested;
        $this->current = $parent;
        // The child may have bound a set of its own or let another owner's coroutine run: the caller goes
        // on with its own.
        $state = ($parent ?? $this->main)?->state;
        if ($state !== null && $state !== $this->installed) {
            $this->install($state);
        }
        return $coroutine;
    }

    /**
     * Suspends the current coroutine until resume() or throw() is called for it.
     * $onCancel undoes the wait (removes a watcher, leaves a queue) when the coroutine is cancelled.
     */
    public function await(?\Closure $onCancel = null): mixed
    {
        $coroutine = $this->current;
        if ($coroutine === null) {
            return $this->awaitMain($onCancel);
        }
        // hasQueued(), inlined: every wait of a worker with admission waiting passes here.
        if ($this->onIdle !== [] && $this->ready === [] && $this->batchLeft === 0 && !$this->driver->owesWork()) {
            $this->idle();
        }
        $coroutine->suspending($onCancel);
        if (\ob_get_level() <= $coroutine->outputBase) {
            // The resumer cleared $waiting and set $current; a thrown wake-up is raised by Fiber itself.
            return \Fiber::suspend();
        }
        // Its open output buffers wait with it (OutputBuffers), whichever way it is woken.
        $buffers = OutputBuffers::detach($coroutine, $coroutine->outputBase);
        try {
            $result = \Fiber::suspend();
        } catch (\Throwable $e) {
            OutputBuffers::attach($coroutine, $buffers);
            throw $e;
        }
        OutputBuffers::attach($coroutine, $buffers);
        return $result;
    }

    /**
     * Binds the running coroutine (or {main}) to a set of followed process-wide values and installs it
     * now; from here on the scheduler puts that set in place whenever the coroutine resumes, and
     * coroutines it starts inherit it. Null unbinds (the values in place stay until another bound
     * coroutine runs). Returns the set the coroutine was bound to, for the caller to restore.
     */
    public function bind(?StateSet $state): ?StateSet
    {
        $coroutine = $this->self();
        $previous = $coroutine->state;
        $coroutine->state = $state;
        if ($state !== null && $state !== $this->installed) {
            $this->install($state);
        }
        return $previous;
    }

    /**
     * Whether the running coroutine may wait without giving the loop a turn (a hook's idle poll): nothing
     * is queued to be resumed (by runReady(), a deferred callback of the loop), and the coroutine was
     * entered by the loop itself, not by a go() or a callback whose caller goes on once it waits.
     */
    public function mayHoldTheLoop(): bool
    {
        if ($this->nested !== 0 || $this->ready !== [] || $this->batchLeft !== 0 || !$this->driver->isRunning()) {
            return false;
        }
        if ($this->onIdle === []) {
            return true;
        }
        // The worker would hold its loop for this wait: first let whenIdle()'s callbacks wake whom they
        // will, and then the wait goes through the loop.
        if (!$this->driver->owesWork()) {
            $this->idle();
        }
        return $this->ready === [];
    }

    /**
     * Whether anything is queued to run before the loop would wait: wake-ups not yet run, or callbacks
     * the loop owes (events of its running dispatch, deferred callbacks). False means the worker would
     * have nothing to do if the running coroutine waited now.
     */
    public function hasQueued(): bool
    {
        return $this->ready !== [] || $this->batchLeft !== 0 || $this->driver->owesWork();
    }

    /**
     * Sets what runs when the worker is about to have nothing to run: a coroutine is about to wait, or a
     * hook asks whether its wait may hold the loop, with nothing queued (hasQueued()). The callback may
     * wake coroutines (queued: the wait then goes through the loop). One callback per owner; null
     * removes the owner's. What an InstancePool uses to admit a further request into the framework
     * only when the worker has CPU to spare.
     */
    public function whenIdle(object $owner, ?\Closure $callback): void
    {
        if ($callback === null) {
            unset($this->onIdle[\spl_object_id($owner)]);
            return;
        }
        $this->onIdle[\spl_object_id($owner)] = $callback;
    }

    private function idle(): void
    {
        foreach ($this->onIdle as $callback) {
            $callback();
        }
    }

    /**
     * Wakes a waiting coroutine with a value: at once from the loop's context, queued from a coroutine.
     * $last: the caller, a loop callback, does nothing after this call but return to the loop, so the
     * coroutine may hold the loop while it waits next (mayHoldTheLoop()); a caller that goes on to wake
     * others or to do more work leaves it false.
     */
    public function resume(Coroutine $coroutine, mixed $value = null, bool $last = false): void
    {
        $fiber = $coroutine->waking();
        if ($coroutine === $this->main) {
            $this->mainValue = $value;
            $this->driver->stop();
            return;
        }
        if ($this->current === null && !$this->runScheduled) {
            if ($last) {
                // switchTo(), inlined (nothing runs here: $current is null before and after): the wake-up
                // of every wait the loop ends, a hooked query's included.
                if ($coroutine->state !== null && $coroutine->state !== $this->installed) {
                    $this->install($coroutine->state);
                }
                $this->current = $coroutine;
                $fiber->resume($value);
                $this->current = null;
                return;
            }
            ++$this->nested;
            $this->switchTo($coroutine, $fiber, $value, null);
            --$this->nested;
            return;
        }
        $this->enqueue($coroutine, $fiber, $value, null);
    }

    /** Wakes a waiting coroutine by throwing into it. */
    public function throw(Coroutine $coroutine, \Throwable $error): void
    {
        $fiber = $coroutine->waking();
        if ($coroutine === $this->main) {
            $this->mainError = $error;
            $this->driver->stop();
            return;
        }
        $this->enqueue($coroutine, $fiber, null, $error);
    }

    /**
     * The coroutine whose Fiber is running this code, or null: outside of any, or inside a Fiber of
     * someone else's (a generator-driven library, a test's own Fiber) that the scheduler never suspends.
     * What a hook asks before it suspends instead of blocking.
     */
    public function running(): ?Coroutine
    {
        $current = $this->current;
        return $current !== null && $current->runsHere() ? $current : null;
    }

    /** The handle of {main}: what code outside of any coroutine waits as. */
    public function main(): Coroutine
    {
        return $this->main ??= new Coroutine(0, null, [], $this->rootContext());
    }

    /** The running coroutine, or {main}'s handle outside of any: whoever would wait if this code waited. */
    public function self(): Coroutine
    {
        return $this->current ?? ($this->main ??= new Coroutine(0, null, [], $this->rootContext()));
    }

    /** Lets idle Fibers beyond what the current load needs go (their stacks are unmapped). */
    public function trimIdle(): void
    {
        $keep = \max(self::MIN_IDLE_FIBERS, $this->peakLive);
        $this->peakLive = $this->liveCount;
        $excess = \count($this->idle) - $keep;
        if ($excess > 0) {
            // Dropping a suspended Fiber unwinds it: fiberMain() ends without running anything.
            foreach (\array_splice($this->idle, 0, $excess) as $fiber) {
                unset($this->onFiber[\spl_object_id($fiber)]);
            }
            $this->fibers -= $excess;
        }
    }

    /** @return array<int, Coroutine> */
    public function live(): array
    {
        $live = [];
        foreach ($this->onFiber as $coroutine) {
            if ($coroutine !== null) {
                $live[$coroutine->id] = $coroutine;
            }
        }
        \ksort($live);
        return $live;
    }

    /** @return array{live: int, fibers: int, idle: int} */
    public function stats(): array
    {
        return ['live' => $this->liveCount, 'fibers' => $this->fibers, 'idle' => \count($this->idle)];
    }

    public function rootContext(): Context
    {
        return $this->rootContext ??= new Context(null);
    }

    /** Called when the handle of a coroutine whose failure nobody joined is released (UnjoinedFailure). */
    public function reportUncaught(\Throwable $error, int $id): void
    {
        if ($this->uncaughtHandler !== null) {
            ($this->uncaughtHandler)($error, $id);
            return;
        }
        \fwrite(\STDERR, \sprintf(
            "[weft] Unhandled exception in coroutine #%d (nobody joined it): %s\n",
            $id,
            (string) $error,
        ));
    }

    /**
     * {main}'s wait: run the loop until resume() or throw() stops it for us. The loop returning on its
     * own (nothing referenced is left) while we still wait means nothing can ever wake us: a deadlock.
     */
    private function awaitMain(?\Closure $onCancel): mixed
    {
        $main = $this->main();
        if ($this->driver->isRunning()) {
            throw SuspensionError::insideLoopCallback();
        }
        $main->suspending($onCancel);
        $idleRuns = 0;
        while ($main->isWaiting()) {
            $this->driver->run();
            if (!$main->isWaiting()) {
                break;
            }
            // run() also returns after someone else's stop(); only a run that finds nothing referenced
            // twice in a row (the second one empties the deferred queue) proves nothing can wake us.
            if ($this->driver->watcherCount()['referenced'] > 0) {
                $idleRuns = 0;
            } elseif (++$idleRuns >= 2) {
                $main->waking();
                if ($onCancel !== null) {
                    $onCancel();
                }
                throw DeadlockError::waiting($this->live());
            }
        }
        if ($main->state !== null && $main->state !== $this->installed) {
            $this->install($main->state);
        }
        $error = $this->mainError;
        $value = $this->mainValue;
        $this->mainError = $this->mainValue = null;
        if ($error !== null) {
            throw $error;
        }
        return $value;
    }

    /** @param \Fiber $fiber untyped, as in switchTo() */
    private function enqueue(Coroutine $coroutine, $fiber, mixed $value, ?\Throwable $error): void
    {
        $this->ready[] = [$coroutine, $fiber, $value, $error];
        if (!$this->runScheduled) {
            $this->runScheduled = true;
            $this->driver->defer($this->runReady(...));
        }
    }

    private function runReady(): void
    {
        $budget = self::RUN_BUDGET;
        while ($this->ready !== [] && $budget > 0) {
            $batch = $this->ready;
            $this->ready = [];
            $this->batchLeft = \count($batch);
            foreach ($batch as $i => [$coroutine, $fiber, $value, $error]) {
                if (--$budget < 0) {
                    // Out of budget: keep the rest, in order, ahead of what arrived meanwhile.
                    $this->ready = \array_merge(\array_slice($batch, $i), $this->ready);
                    $this->batchLeft = 0;
                    break 2;
                }
                --$this->batchLeft;
                // Inlined switchTo(): this loop is the hot path of every coroutine-to-coroutine wake-up.
                if ($coroutine->state !== null && $coroutine->state !== $this->installed) {
                    $this->install($coroutine->state);
                }
                $this->current = $coroutine;
                if ($error !== null) {
                    $fiber->throw($error);
                } else {
                    $fiber->resume($value);
                }
                $this->current = null;
            }
        }
        if ($this->ready !== []) {
            $this->driver->defer($this->runReady(...));
            return;
        }
        $this->runScheduled = false;
    }

    /**
     * Runs a coroutine until it next waits. $fiber (its Fiber, from Coroutine::waking()) is untyped: a
     * class type is checked on every call (zend_check_user_type_slow) and this is every wake-up. No try
     * at all: a coroutine's exceptions are caught inside its Fiber (Coroutine::execute), so resume() only
     * throws on a broken invariant, which is fatal anyway.
     */
    private function switchTo(Coroutine $coroutine, $fiber, mixed $value, ?\Throwable $error): void
    {
        if ($coroutine->state !== null && $coroutine->state !== $this->installed) {
            $this->install($coroutine->state);
        }
        $previous = $this->current;
        $this->current = $coroutine;
        if ($error !== null) {
            $fiber->throw($error);
        } else {
            $fiber->resume($value);
        }
        $this->current = $previous;
    }

    /** Saves the set in place (what its owner changed since) and puts $state in its stead. */
    private function install(StateSet $state): void
    {
        $current = $this->installed;
        $this->installed = $state;
        if ($current === null) {
            $state->install();
        } else {
            $state->replace($current);
        }
    }

    /** The body of every pooled Fiber: run a coroutine, go back to the pool, wait for the next one. */
    private function fiberMain(Coroutine $coroutine, int $self): void
    {
        while (true) {
            $this->onFiber[$self] = $coroutine;
            $coroutine->execute(); // which lets go of this Fiber
            $this->onFiber[$self] = null;
            --$this->liveCount;
            $coroutine = null;
            $idle = \count($this->idle);
            if ($idle >= self::MIN_IDLE_FIBERS && $idle >= $this->peakLive) {
                unset($this->onFiber[$self]);
                $this->fibers--;
                return;
            }
            $this->idle[] = \Fiber::getCurrent();
            $coroutine = \Fiber::suspend();
        }
    }
}
