<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * The one "used by two coroutines at once" error: a connection (a socket, a MySQL, PostgreSQL or Redis
 * connection) serves one coroutine at a time, and interleaving two would corrupt its protocol stream.
 * The clients' own variants (Mysql\ConcurrentQuery, Redis\ConnectionBusy) extend it. Use a pool, or a Mutex.
 */
class ConcurrentUse extends \Error implements \Weft\WeftException
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
