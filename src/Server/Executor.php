<?php

declare(strict_types=1);

namespace Weft\Server;

/**
 * How a protocol handler calls the application: the difference between coroutine and sync mode.
 *
 * A connection's I/O always runs in a coroutine. In coroutine mode the application runs right there,
 * so its waits suspend only that request. In sync mode it runs outside of any coroutine, one call at a
 * time, so every wait inside it blocks the worker: the classic resident model.
 */
interface Executor
{
    /**
     * Runs $call(...$args). Arguments are passed through rather than captured in a closure: this runs
     * once per request, and a closure per request is an allocation the hot path does not need.
     *
     * @template T @param \Closure(mixed...): T $call @return T
     */
    public function call(\Closure $call, mixed ...$args): mixed;

    /** The name of the mode: "coroutine" or "sync". */
    public function mode(): string;

    /** Application calls completed so far (requests, lines). */
    public function calls(): int;

    /** @param null|\Closure(int): void $listener told the running count after every completed call */
    public function onCall(?\Closure $listener): void;
}
