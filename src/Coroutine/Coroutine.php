<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * A handle on a running or finished coroutine. join() waits for its result or rethrows its failure.
 * A failure that nobody joins is reported when the handle is released, never dropped silently (by an
 * UnjoinedFailure the handle holds: no destructor runs for the many coroutines that end without one).
 */
final class Coroutine
{
    /*
     * The properties below are written as every coroutine starts and ends (one per request): they are
     * declared untyped, their types in @var. Under the tracing JIT an assignment to a typed property goes
     * through a helper that checks the type (zend_verify_property_type; a class type through
     * zend_check_user_type_slow), ~60 instructions each: measured with callgrind, typing these twenty
     * properties of Coroutine, Scheduler and Dispatcher costs ~840 instructions per request.
     */

    /** @var ?\Fiber the Fiber it runs on (pooled: given by Scheduler::spawn(), let go when it finishes) */
    private $fiber;
    /** @var bool suspended in Scheduler::await() and not yet scheduled to wake: set by suspending(), cleared by waking() */
    private $waiting = false;
    /** @var ?\Closure */
    private $onCancel = null;
    /** @internal @var int the output buffer level when it started: the buffers above it are its own (OutputBuffers) */
    public $outputBase = 0;
    /** @internal @var ?StateSet the followed process-wide values this coroutine runs with (Scheduler::bind()) */
    public $state = null;
    /** @var ?\Throwable raised at the next wait when cancel() arrived while the coroutine could not be interrupted */
    private $pendingCancel = null;

    /** @var bool */
    private $finished = false;
    /** @var mixed */
    private $result = null;
    /** @var ?\Throwable */
    private $error = null;
    /** @var ?UnjoinedFailure set when it failed with nobody joining it yet: reports the failure when released, unless join() comes first */
    private $unjoined = null;
    /** @var list<Coroutine> */
    private $joiners = [];
    /** @var ?Context */
    private $context = null;
    /**
     * @internal @var float when it started, in loop time (Driver::now(), set by Scheduler::spawn()): a
     * request's age in `status` (the Dispatcher's calls in flight), kept on the object every request makes
     * anyway instead of an array of the Dispatcher's own per request.
     */
    public $startedAt = 0.0;
    /**
     * @internal @var bool its owner's work on it is done while it still runs: the Dispatcher's call has
     * ended and what runs next on this coroutine (the session's next request) is no longer that call
     */
    public $released = false;

    /** @var int never changes (not declared readonly, nor typed: see the constructor) */
    public $id;
    /** @var ?\Closure what it runs, until it finishes */
    private $task;
    /** @var array the arguments of $task, until it finishes */
    private $args;
    /** @var Context the context its own inherits from (never changes) */
    private $parentContext;

    /**
     * @internal created by Scheduler::spawn()
     * @param int $id
     * @param ?\Closure $task
     * @param array<mixed> $args
     * @param Context $parentContext
     * @param ?\Fiber $fiber the pooled Fiber it runs on
     *
     * Neither the parameters nor the properties they fill are typed, nor promoted (see the note on the
     * properties above): measured with scripts/dispatch-ir.php, typed promoted parameters (int, ?object,
     * array, object) cost ~320 instructions per coroutine under the tracing JIT. $id and $parentContext
     * are never written after this but are not declared readonly: the tracing JIT leaves its trace at an
     * assignment to a readonly property, and that exit, taken for every coroutine, ends up blacklisted
     * (the constructor and the rest of Scheduler::spawn() up to the Fiber's switch then ran in the
     * interpreter).
     */
    public function __construct($id, $task, $args, $parentContext, $fiber = null)
    {
        $this->id = $id;
        $this->task = $task;
        $this->args = $args;
        $this->parentContext = $parentContext;
        $this->fiber = $fiber;
    }

    public function isFinished(): bool
    {
        return $this->finished;
    }

    /**
     * Whether it is suspended and nobody has woken it yet: a watcher or timer that may fire after a
     * cancel (or another wake-up) checks this before Scheduler::resume(), which fails on a second wake.
     */
    public function isWaiting(): bool
    {
        return $this->waiting;
    }

    /** @internal the Fiber it runs on, null once finished (DeadlockError's trace, Scheduler's switches) */
    public function fiber(): ?\Fiber
    {
        return $this->fiber;
    }

    /**
     * @internal Scheduler::await(), just before it suspends: raises a cancel that arrived while the
     * coroutine could not be interrupted, else marks it waiting, with what undoes the wait on a cancel.
     */
    public function suspending(?\Closure $onCancel): void
    {
        if ($this->pendingCancel !== null) {
            $reason = $this->pendingCancel;
            $this->pendingCancel = null;
            throw $reason;
        }
        if ($this->waiting) {
            throw SuspensionError::alreadyWaiting($this->id);
        }
        $this->waiting = true;
        $this->onCancel = $onCancel;
    }

    /**
     * @internal Scheduler::resume()/throw(): the one wake-up of this wait (a second one is a bug, loudly).
     * Returns the Fiber to switch to (null for {main}), sparing the switch a second call. Untyped: a
     * class return type is checked on every call (zend_check_user_type_slow), here once per wake-up.
     *
     * @return ?\Fiber
     */
    public function waking()
    {
        if (!$this->waiting) {
            throw SuspensionError::notWaiting($this->id);
        }
        $this->waiting = false;
        $this->onCancel = null;
        return $this->fiber;
    }

    /** @internal whether the code running now runs on this coroutine's Fiber (a hook may suspend it) */
    public function runsHere(): bool
    {
        return $this->fiber === \Fiber::getCurrent();
    }

    /** @internal Weft\timeout() ending: its own Timeout, not raised yet, must not hit a later wait */
    public function dropPendingTimeout(object $token): void
    {
        if ($this->pendingCancel instanceof Timeout && $this->pendingCancel->token === $token) {
            $this->pendingCancel = null;
        }
    }

    /**
     * @internal what it runs, and with which arguments, until it finishes (then null and []): how the
     * Dispatcher finds its requests in flight among Scheduler::live() without a list of its own.
     */
    public function task(): ?\Closure
    {
        return $this->task;
    }

    /** @internal see task() */
    public function args(): array
    {
        return $this->args;
    }

    public function context(): Context
    {
        return $this->context ??= new Context($this->parentContext);
    }

    /**
     * Waits for the coroutine and returns its result, or throws what it threw.
     * Outside of any coroutine, the wait runs the loop until the coroutine has finished.
     */
    public function join(?float $timeout = null): mixed
    {
        if (!$this->finished) {
            $scheduler = Scheduler::get();
            $current = $scheduler->self();
            if ($current === $this) {
                throw new \Error('A coroutine cannot join itself');
            }
            $wait = function () use ($scheduler, $current): void {
                $this->joiners[] = $current;
                $scheduler->await(function () use ($current): void {
                    $this->joiners = \array_values(\array_filter($this->joiners, fn ($c) => $c !== $current));
                });
            };
            $timeout === null ? $wait() : \Weft\timeout($timeout, $wait, "Joining coroutine #{$this->id}");
        }
        if ($this->unjoined !== null) {
            $this->unjoined->joined = true;
        }
        if ($this->error !== null) {
            throw $this->error;
        }
        return $this->result;
    }

    /**
     * Asks the coroutine to stop: the wait it is suspended in throws $reason (by default Cancelled).
     * A coroutine that is not waiting sees the exception at its next wait.
     */
    public function cancel(?\Throwable $reason = null): void
    {
        if ($this->finished) {
            return;
        }
        $reason ??= new Cancelled("Coroutine #{$this->id} was cancelled");
        if ($this->waiting) {
            $onCancel = $this->onCancel;
            if ($onCancel !== null) {
                $onCancel();
            }
            Scheduler::get()->throw($this, $reason);
            return;
        }
        $this->pendingCancel = $reason;
    }

    /** @internal run inside the coroutine's Fiber, which it lets go when done (the Fiber goes back to the pool) */
    public function execute(): void
    {
        $task = $this->task;
        $args = $this->args;
        // Two arguments (every request: the Dispatcher's session and request) are passed directly: the
        // tracing JIT runs an unpacking call through a helper (~170 instructions more per request).
        try {
            $this->result = \count($args) === 2 ? $task($args[0], $args[1]) : $task(...$args);
        } catch (\Throwable $e) {
            $this->error = $e;
        }
        $this->task = null;
        $this->args = [];
        $this->finished = true;
        $this->fiber = null;
        $this->pendingCancel = null;
        if ($this->joiners !== []) {
            $scheduler = Scheduler::get();
            foreach ($this->joiners as $joiner) {
                $scheduler->resume($joiner);
            }
            $this->joiners = [];
        } elseif ($this->error !== null) {
            $this->unjoined = new UnjoinedFailure($this->error, $this->id);
        }
    }
}
