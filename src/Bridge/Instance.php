<?php

declare(strict_types=1);

namespace Weft\Bridge;

use Weft\Coroutine\Scheduler;
use Weft\Coroutine\StateSet;

/**
 * One booted framework instance of an InstancePool and its copy of the followed process-wide values.
 *
 * @internal
 * @template T of object
 */
final class Instance
{
    /**
     * Whether a request holds it (InstancePool::acquire() to release()). A coroutine whose request gave
     * its instance back is unbound from the instance's state: until it takes one again (a keep-alive
     * connection reading its next request, a request waiting for admission) it runs no framework code,
     * and a resume of it costs no switch of the followed state.
     */
    public bool $lent = false;

    /** @param T $framework */
    public function __construct(
        public readonly object $framework,
        public readonly StateSet $state,
        public readonly int $number,
    ) {
    }

    /**
     * Runs $task with this instance's state in place, in whichever coroutine calls it (the end of a
     * streamed body runs in the connection's writer, not in the request's coroutine).
     *
     * @template R
     * @param \Closure(): R $task
     * @return R
     */
    public function run(\Closure $task): mixed
    {
        $scheduler = Scheduler::get();
        $previous = $scheduler->bind($this->state);
        try {
            return $task();
        } finally {
            // The task gave the instance back (the end of a request): the caller stays unbound (see $lent).
            $scheduler->bind($previous === $this->state && !$this->lent ? null : $previous);
        }
    }
}
