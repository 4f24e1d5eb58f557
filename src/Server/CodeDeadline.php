<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\Ext\Deadline;

/**
 * --max-request-time for a request's own code, with the native extension: a request that never waits
 * (an endless loop, a long computation) is interrupted where it runs, as max_execution_time would do it
 * (Weft\Ext\Deadline, ext/weft_deadline.c): RequestTimeout is thrown into its code at the next opcode
 * boundary, its finally blocks run, and it is answered 504 while the worker and its other requests go
 * on. An application that catches it and goes on looping gets it again a tick (50 ms) later, until
 * --worker-timeout ends the worker.
 *
 * Only the application's code is interrupted: the deadline is left once the application has returned
 * (leave()), and code under Weft's own src/ is never interrupted (a tick later it is tried again), so
 * the server's bookkeeping cannot be cut in half. Without the extension, or in a long C call (the
 * engine only looks between opcodes), the master's --worker-timeout is the fallback (Master, Worker).
 *
 * @internal
 */
final class CodeDeadline
{
    /** How often a passed deadline is raised again while the request's code still runs. */
    private const TICK = 0.05;

    private static bool $on = false;

    /** In a worker, with --max-request-time: whether running code can be interrupted here. */
    public static function enable(float $limit): bool
    {
        if ($limit <= 0 || !\class_exists(Deadline::class, false)) {
            return self::$on = false;
        }
        Deadline::configure(
            RequestTimeout::class,
            RequestTimeout::after($limit, 'Request (--max-request-time)')->getMessage() . ', interrupted while it ran',
            \dirname(__DIR__) . '/',
            self::TICK,
        );
        return self::$on = true;
    }

    /** In the request's coroutine, as it starts: its code may run $seconds. */
    public static function arm(float $seconds): void
    {
        if (self::$on) {
            Deadline::arm($seconds);
        }
    }

    /** In the request's coroutine: the application has returned (or thrown); nothing more to interrupt. */
    public static function leave(): void
    {
        if (self::$on) {
            Deadline::clear();
        }
    }
}
