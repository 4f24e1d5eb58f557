<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * The one "used by two coroutines at once" error, for every kind of connection: a socket or stream, a
 * MySQL, PostgreSQL or Redis connection, a Redis subscriber, a curl handle (thrown by the extension). A
 * connection serves one coroutine at a time, and interleaving two would corrupt its protocol stream, so the
 * second user is refused before anything is sent (the extension's hooks ask hooked() for theirs). A
 * programming error, hence an \Error: share connections through a pool, or serialise their use with a
 * Mutex.
 */
final class ConcurrentUse extends \Error implements \Weft\WeftException
{
    /**
     * $what is in use by $holder, and $intruder tried to use it too. $holder and $intruder are coroutines,
     * null for the main program, or a description when the holder is not a coroutine's handle.
     */
    public static function of(string $what, Coroutine|string|null $holder, ?Coroutine $intruder, string $advice): self
    {
        return new self(\sprintf(
            '%s is in use by %s; %s cannot use it at the same time (a connection serves one coroutine at a time): %s',
            $what,
            \is_string($holder) ? $holder : self::who($holder),
            self::who($intruder),
            $advice,
        ));
    }

    /** A second reader (or writer) of a socket or stream while another coroutine is suspended on it. */
    public static function stream(string $direction, Coroutine $holder, ?Coroutine $intruder): self
    {
        return new self(\sprintf(
            'Coroutine #%s tried to %s a connection that coroutine #%d is already %s; '
            . 'a connection serves one coroutine at a time (use a pool)',
            $intruder?->id ?? 'main',
            $direction === 'read' ? 'read from' : 'write to',
            $holder->id,
            $direction === 'read' ? 'reading from' : 'writing to',
        ));
    }

    /**
     * From the extension's hooks (through the closure Hooks::enable() installs): $intruder called a hooked
     * function on something another coroutine is suspended on. $hook is "stream" (a socket stream:
     * PDO MySQL, mysqli, phpredis, ...; the hook knows no more) or "curl" ($call: the function called,
     * $handle: the handle's class, $holderCall: the function the holder is suspended in).
     */
    public static function hooked(string $hook, ?string $call, ?string $handle, ?string $holderCall, ?Coroutine $intruder): self
    {
        $what = $handle === null ? 'connection' : $handle;
        return self::of(
            $call === null ? "This {$what}" : "{$call}(): this {$what}",
            'another coroutine (' . ($holderCall === null ? 'waiting on it' : "suspended in {$holderCall}()") . ')',
            $intruder,
            $hook === 'curl' ? 'give each coroutine its own handle' : 'use one connection per coroutine, or a pool',
        );
    }

    /** How the messages name a coroutine, or the main program for null. */
    public static function who(?Coroutine $coroutine): string
    {
        return $coroutine === null || $coroutine->id === 0 ? 'the main program (outside of any coroutine)' : "coroutine #{$coroutine->id}";
    }
}
