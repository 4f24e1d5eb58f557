<?php

declare(strict_types=1);

namespace Weft\Client\Mysql;

/**
 * A second coroutine called into a connection while a command of another one was in flight. A MySQL
 * connection carries one command at a time; interleaving two would corrupt the protocol stream, so the
 * second caller is refused before anything is sent. A programming error, hence an \Error.
 */
final class ConcurrentQuery extends \Weft\Coroutine\ConcurrentUse
{
    public static function busy(int $connectionId, int $owner, int $intruder): self
    {
        return new self(\sprintf(
            'Connection #%d is busy with a query of %s; %s cannot use it at the same time: '
            . 'use Weft\Client\Mysql\Pool to share connections',
            $connectionId,
            $owner === 0 ? 'the main (non-coroutine) code' : "coroutine #$owner",
            $intruder === 0 ? 'the main (non-coroutine) code' : "coroutine #$intruder",
        ));
    }
}
