<?php

declare(strict_types=1);

namespace Weft\Server;

/** Runs the application inside the connection's coroutine. */
final class CoroutineExecutor implements Executor
{
    private int $calls = 0;
    private ?\Closure $listener = null;

    public function call(\Closure $call, mixed ...$args): mixed
    {
        try {
            return $call(...$args);
        } finally {
            $this->calls++;
            if ($this->listener !== null) {
                ($this->listener)($this->calls);
            }
        }
    }

    public function mode(): string
    {
        return 'coroutine';
    }

    public function calls(): int
    {
        return $this->calls;
    }

    public function onCall(?\Closure $listener): void
    {
        $this->listener = $listener;
    }
}
