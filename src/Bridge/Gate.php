<?php

declare(strict_types=1);

namespace Weft\Bridge;

use Weft\Coroutine\Channel;

/**
 * One request at a time inside a framework application.
 *
 * A booted Symfony kernel or Laravel application is one object graph per worker (the request stack,
 * the container's "request", the auth guard...), written for one request at a time. In coroutine
 * mode a second request would run while the first waits on I/O and see its state, so the bridges
 * let one request in at a time; the others wait their turn in their own coroutines (the worker
 * still accepts and parses). In sync mode there is never a second one to wait.
 *
 * A buffered channel of one is the semaphore: unlike a mutex it may be released by whichever
 * coroutine finishes the request (a streamed body ends in the writer, not in the handler).
 *
 * @internal
 */
final class Gate
{
    private readonly Channel $slot;

    public function __construct()
    {
        $this->slot = new Channel(1);
    }

    public function enter(): void
    {
        $this->slot->send(true);
    }

    public function leave(): void
    {
        if ($this->slot->count() > 0) {
            $this->slot->receive();
        }
    }
}
