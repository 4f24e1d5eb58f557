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
 * engine only looks between opcodes), the master's --worker-timeout is the fallback (Master, Worker):
 * for it, each request also leaves its connection's last words here (track()), which the extension
 * writes when PHP's own signal handler cannot run.
 *
 * @internal
 */
final class CodeDeadline
{
    /** How often a passed deadline is raised again while the request's code still runs. */
    private const TICK = 0.05;

    private static bool $on = false;
    /** Whether requests leave their connection's last words with the extension (lastWords()). */
    private static bool $tracking = false;
    /**
     * @internal $on || $tracking: whether a request's end has anything to clear (leave()). Read in place
     * by the Dispatcher for every request: a static call that finds nothing to do costs ~150
     * instructions under the tracing JIT (scripts/dispatch-ir.php), this read a few.
     */
    public static bool $leaves = false;

    /** In a worker, with --max-request-time: whether running code can be interrupted here. */
    public static function enable(float $limit): bool
    {
        if ($limit <= 0 || !\class_exists(Deadline::class, false)) {
            self::$on = false;
            self::$leaves = self::$tracking;
            return false;
        }
        Deadline::configure(
            RequestTimeout::class,
            RequestTimeout::after($limit, 'Request (--max-request-time)')->getMessage() . ', interrupted while it ran',
            \dirname(__DIR__) . '/',
            self::TICK,
        );
        self::$leaves = true;
        return self::$on = true;
    }

    /**
     * In a worker: the extension answers the requests in flight itself on $signal (SIGXCPU, the
     * master's last call before it kills a stuck worker) when PHP's own handler for it, installed
     * before, cannot run because the worker is inside a long C call. False without the extension.
     */
    public static function lastWords(int $signal): bool
    {
        if (!\class_exists(Deadline::class, false)) {
            self::$tracking = false;
            self::$leaves = self::$on;
            return false;
        }
        Deadline::lastWordsOn($signal);
        self::$leaves = true;
        return self::$tracking = true;
    }

    /**
     * In the request's coroutine, while the application has it: what the extension writes to the
     * connection (descriptor $fd) if the worker must go while this request runs and PHP cannot answer.
     */
    public static function track(?int $fd, string $lastWords): void
    {
        if (self::$tracking && $fd !== null) {
            Deadline::track($fd, $lastWords);
        }
    }

    /** PHP's handler answers the requests in flight: true unless the extension already did. */
    public static function claimLastWords(): bool
    {
        return !self::$tracking || Deadline::claimLastWords();
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
        if (self::$on || self::$tracking) {
            Deadline::clear();
        }
    }
}
