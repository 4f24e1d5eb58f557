<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * Two coroutines tried to wait on the same stream in the same direction at once. A connection serves one
 * coroutine at a time: interleaving two would corrupt its protocol stream. Use a pool, or a Mutex.
 */
final class ConcurrentUse extends \Error implements \Weft\WeftException
{
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
}
