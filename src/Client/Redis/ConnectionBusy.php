<?php

declare(strict_types=1);

namespace Weft\Client\Redis;

/**
 * A second coroutine used a connection while another was in the middle of a command on it. Interleaving
 * the two would corrupt the stream, so the second is refused. Give each coroutine its own connection:
 * use Weft\Client\Redis\Pool.
 */
final class ConnectionBusy extends \Weft\Coroutine\ConcurrentUse
{
    public static function inUse(string $what, string $owner, string $intruder): self
    {
        return new self(\sprintf(
            'The Redis %s is in use by %s; %s cannot use it until that command has finished. '
            . 'A connection serves one coroutine at a time: use Weft\Client\Redis\Pool',
            $what,
            $owner,
            $intruder,
        ));
    }
}
