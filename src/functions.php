<?php

declare(strict_types=1);

namespace Weft;

use Weft\Coroutine\Context;
use Weft\Coroutine\Coroutine;
use Weft\Coroutine\Scheduler;
use Weft\Coroutine\Timeout;

/**
 * Runs $main as a coroutine and drives the event loop until it and every coroutine it started have
 * finished; returns its result or throws its exception. Fails with DeadlockError when coroutines still
 * wait but nothing is left that could wake them.
 */
function run(\Closure $main): mixed
{
    $scheduler = Scheduler::get();
    if ($scheduler->current !== null) {
        return $main();
    }
    $coroutine = $scheduler->spawn($main);
    $failure = null;
    try {
        $result = $coroutine->join();
    } catch (\Weft\Coroutine\DeadlockError $e) {
        throw $e;
    } catch (\Throwable $failure) {
        $result = null;
    }
    // Then everything it started: what is still waiting when the loop runs dry can never finish.
    $scheduler->driver->run();
    $stuck = $scheduler->live();
    if ($stuck !== []) {
        throw \Weft\Coroutine\DeadlockError::waiting($stuck);
    }
    if ($failure !== null) {
        throw $failure;
    }
    return $result;
}

/** Starts a coroutine. It runs at once until its first wait; then the caller goes on. */
function go(\Closure $task, mixed ...$args): Coroutine
{
    return Scheduler::get()->spawn($task, $args);
}

/**
 * Suspends the current coroutine for $seconds; outside of any coroutine, runs the loop meanwhile.
 *
 * A wait for a timer, the only thing that ends it (a cancel aside): not a time limit racing another event
 * (Coroutine\TimeLimit). Kept this lean on purpose: one closure, one timer, no frame in between
 * (measured with scripts/hooked-wait-ir.php: 5,427 instructions a Weft\sleep(0) here, 5,982 through
 * TimeLimit::once()).
 */
function sleep(float $seconds): void
{
    $scheduler = Scheduler::get();
    $current = $scheduler->self();
    $driver = $scheduler->driver;
    $timer = $driver->delay($seconds, static function () use ($scheduler, $current): void {
        if ($current->isWaiting()) {
            $scheduler->resume($current, null, true);
        }
    });
    // A cancellation throws out of the wait: the timer goes then (a catch, not a second closure per
    // sleep; the timer finds the coroutine no longer waiting if it fires first).
    try {
        $scheduler->await();
    } catch (\Throwable $e) {
        $driver->cancel($timer);
        throw $e;
    }
}

/**
 * Runs $task with a time limit. When it runs out, the wait $task is suspended in throws Timeout, and so
 * does this call. Outside of any coroutine it works the same: {main}'s waits throw.
 *
 * A limit on an operation of any number of waits, hence a cancellation (Coroutine::cancel()), unlike the
 * limit of one wait (Coroutine\TimeLimit), which ends only that wait, with a value.
 *
 * @template T
 * @param \Closure(): T $task
 * @return T
 */
function timeout(float $seconds, \Closure $task, string $what = 'Operation'): mixed
{
    $scheduler = Scheduler::get();
    $current = $scheduler->self();
    $token = new \stdClass();
    $timer = $scheduler->driver->delay($seconds, static function () use ($current, $token, $seconds, $what): void {
        $error = Timeout::after($seconds, $what);
        $error->token = $token;
        $current->cancel($error);
    });
    try {
        return $task();
    } catch (Timeout $e) {
        if ($e->token === $token) {
            $e->token = null;
        }
        throw $e;
    } finally {
        $scheduler->driver->cancel($timer);
        $current->dropPendingTimeout($token);
    }
}

/** The running coroutine's context (values visible to it and the coroutines it starts). */
function context(): Context
{
    return Context::current();
}

/** The running coroutine, or null outside of any. */
function current(): ?Coroutine
{
    return Scheduler::get()->current;
}

/**
 * The server's PSR-3 logger: records go to the server log (--log-file, --log-format, --log-level),
 * tagged with the worker. Outside a server, a logger that writes to stderr.
 */
function logger(): \Psr\Log\LoggerInterface
{
    return Server\ServerLog::get();
}
