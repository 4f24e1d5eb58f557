<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * A handle on a running or finished coroutine. join() waits for its result or rethrows its failure.
 * A failure that nobody joins is reported when the handle is released, never dropped silently.
 */
final class Coroutine
{
    /** @internal */
    public ?\Fiber $fiber = null;
    /** @internal suspended in Scheduler::await() and not yet scheduled to wake */
    public bool $waiting = false;
    /** @internal */
    public ?\Closure $onCancel = null;
    /** @internal the output buffer level when it started: the buffers above it are its own (OutputBuffers) */
    public int $outputBase = 0;
    /** @internal the followed process-wide values this coroutine runs with (Scheduler::bind()) */
    public ?StateSet $state = null;
    /** @internal raised at the next wait when cancel() arrived while the coroutine could not be interrupted */
    public ?\Throwable $pendingCancel = null;

    private bool $finished = false;
    private mixed $result = null;
    private ?\Throwable $error = null;
    private bool $observed = false;
    /** @var list<Coroutine> */
    private array $joiners = [];
    private ?Context $context = null;

    /** @internal created by Scheduler::spawn() */
    public function __construct(
        public readonly int $id,
        private ?\Closure $task,
        private array $args,
        private readonly Context $parentContext,
    ) {
    }

    public function isFinished(): bool
    {
        return $this->finished;
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
        $this->observed = true;
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

    /** @internal run inside the coroutine's Fiber */
    public function execute(): void
    {
        $task = $this->task;
        $args = $this->args;
        $this->task = null;
        $this->args = [];
        try {
            $this->result = $task(...$args);
        } catch (\Throwable $e) {
            $this->error = $e;
        }
        $this->finished = true;
        $this->pendingCancel = null;
        if ($this->joiners !== []) {
            $this->observed = true;
            $scheduler = Scheduler::get();
            foreach ($this->joiners as $joiner) {
                $scheduler->resume($joiner);
            }
            $this->joiners = [];
        }
    }

    public function __destruct()
    {
        if ($this->error !== null && !$this->observed) {
            Scheduler::get()->reportUncaught($this->error, $this);
        }
    }
}
