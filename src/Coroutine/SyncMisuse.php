<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * A Mutex or WaitGroup used against its contract: a coroutine locking a mutex it already holds, an unlock
 * by a coroutine that does not hold it (or of a mutex nobody holds), more done() than add(). A programming
 * error, hence an \Error, raised at once: going on would let two coroutines into one critical section, or
 * release a wait() before its tasks ended. Typed so that a caller (or a test) can tell it from the errors
 * of the code it guards.
 */
final class SyncMisuse extends \Error implements \Weft\WeftException
{
    public static function mutexReentered(): self
    {
        return new self('Mutex is not reentrant: this coroutine already holds it');
    }

    public static function mutexNotLocked(): self
    {
        return new self('Mutex is not locked');
    }

    public static function mutexNotOwned(): self
    {
        return new self('Only the coroutine that locked the mutex can unlock it');
    }

    public static function waitGroupBelowZero(int $count, int $delta): self
    {
        return new self("WaitGroup counter cannot go below zero: it is {$count}, add({$delta}) (more done() than add())");
    }
}
