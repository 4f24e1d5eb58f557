<?php

declare(strict_types=1);

namespace Weft\Bridge\HttpFoundation;

/**
 * Runs the bridge's end-of-request step exactly once: when a streamed body ends, or, should the
 * body never be written (the client went away first), when the response is dropped.
 *
 * @internal
 */
final class FinishGuard
{
    private ?\Closure $finish;

    /** @param \Closure(): void $finish */
    public function __construct(\Closure $finish)
    {
        $this->finish = $finish;
    }

    public function run(): void
    {
        $finish = $this->finish;
        $this->finish = null;
        if ($finish !== null) {
            $finish();
        }
    }

    public function __destruct()
    {
        $this->run();
    }
}
