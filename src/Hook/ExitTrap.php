<?php

declare(strict_types=1);

namespace Weft\Hook;

use Weft\Coroutine\Scheduler;

/**
 * Remembers that exit() ended a coroutine, for the code that runs it.
 *
 * With the `exit` hook, exit() inside a coroutine throws Weft\Ext\ExitException into it. A framework
 * catches every Throwable around its request and renders it as an error page, so by the time its
 * response comes back the exception is gone; the extension shows it here first (exited()), and the
 * bridge asks afterwards (take()) to answer the request as PHP-FPM would have answered an exit().
 * Kept in the coroutine's own context: two requests in flight never see each other's.
 *
 * @internal exited() is called by the extension (ext/weft_hook_exit.c), handed to it by Hooks::enable()
 */
final class ExitTrap
{
    private const KEY = self::class;

    /**
     * Whether exited() was ever called in this process: until then take() answers without asking
     * the scheduler, which would build a loop where there is none (a bridge under php-fpm).
     */
    private static bool $used = false;

    /** From the extension, just before the exception is thrown into the running coroutine. */
    public static function exited(\Throwable $exit): void
    {
        self::$used = true;
        Scheduler::get()->current?->context()->set(self::KEY, $exit);
    }

    /** The exit() that ended the running coroutine's work since the last take(), if any; forgets it. */
    public static function take(): ?\Throwable
    {
        if (!self::$used) {
            return null;
        }
        $context = Scheduler::get()->current?->context();
        if ($context === null || !$context->has(self::KEY)) {
            return null;
        }
        $exit = $context->get(self::KEY);
        $context->unset(self::KEY);
        return $exit instanceof \Throwable ? $exit : null;
    }
}
