<?php

declare(strict_types=1);

namespace Weft\Bridge;

use Weft\Coroutine\Channel;

use function Weft\current;

/**
 * One request at a time inside a framework application.
 *
 * A booted Symfony kernel or Laravel application is one object graph per worker (the request stack,
 * the container's "request", the auth guard...), written for one request at a time. In coroutine
 * mode a second request would run while the first waits on I/O and see its state, so the bridges
 * let one request in at a time, until its response is written and the framework reset; the others
 * wait their turn in their own coroutines (the worker still accepts and parses).
 *
 * A buffered channel of one is the semaphore: unlike a mutex it may be released by whichever
 * coroutine finishes the request (a streamed body ends in the writer, not in the handler).
 *
 * The server runs every application call in a coroutine, in sync mode too (where it makes one
 * call at a time anyway). A handler called outside any coroutine (directly, not by the server)
 * must not wait for a body that only its caller writes once the call has returned, so there the
 * gate only counts.
 *
 * @internal
 */
final class Gate
{
    private readonly Channel $slot;
    private int $unguarded = 0;

    public function __construct()
    {
        $this->slot = new Channel(1);
    }

    /** Whether the caller runs in a coroutine, where entering may wait and the body may follow the call. */
    public function guards(): bool
    {
        return current() !== null;
    }

    public function enter(): void
    {
        if ($this->guards()) {
            $this->slot->send(true);
        } else {
            $this->unguarded++;
        }
    }

    public function leave(): void
    {
        if ($this->unguarded > 0) {
            $this->unguarded--;
        } elseif ($this->slot->count() > 0) {
            $this->slot->receive();
        }
    }
}
