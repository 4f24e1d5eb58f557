<?php

declare(strict_types=1);

namespace Weft\Client\Redis;

/** EXEC did nothing because a WATCHed key changed since WATCH. Read again and retry the transaction. */
final class WatchConflict extends \RuntimeException implements \Weft\WeftException
{
    public static function aborted(): self
    {
        return new self('The transaction was not executed: a watched key was modified (WATCH); retry it');
    }
}
