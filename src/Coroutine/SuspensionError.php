<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * A suspension used the wrong way (Scheduler::await(), resume(), throw(), TimeLimit): a second wake-up
 * of one wait, a wake-up of a coroutine that does not wait, a wait that could never return. A
 * programming error in whoever drives the suspension, hence an \Error, and raised at once: a wake-up
 * lost or delivered twice would otherwise surface far away, as a hang or a reply to the wrong wait.
 */
final class SuspensionError extends \Error implements \Weft\WeftException
{
    public static function notWaiting(int $coroutine): self
    {
        return new self("Coroutine #{$coroutine} is not waiting; it cannot be resumed");
    }

    public static function alreadyWaiting(int $coroutine): self
    {
        return new self("Coroutine #{$coroutine} is already waiting; it cannot wait twice");
    }

    public static function insideLoopCallback(): self
    {
        return new self('Cannot wait inside an event loop callback: start a coroutine with Weft\\go() and wait in it');
    }

    /** A TimeLimit serves one wait at a time (its owner's). */
    public static function limitInUse(int $coroutine): self
    {
        return new self("This time limit is already in use by a wait of coroutine #{$coroutine}");
    }
}
