<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * A coroutine's failure that nobody has joined yet, held by its handle: reported when the handle is
 * released (this object with it) unless join() took it first. Kept apart from Coroutine so that only a
 * failed coroutine has a destructor to run.
 *
 * @internal
 */
final class UnjoinedFailure
{
    /** join() rethrew it: nothing to report. */
    public bool $joined = false;

    public function __construct(private readonly \Throwable $error, private readonly int $id)
    {
    }

    public function __destruct()
    {
        if (!$this->joined) {
            Scheduler::get()->reportUncaught($this->error, $this->id);
        }
    }
}
