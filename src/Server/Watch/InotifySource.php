<?php

declare(strict_types=1);

namespace Weft\Server\Watch;

/** Placeholder until the extension's inotify lands. */
final class InotifySource
{
    public static function available(): bool
    {
        return false;
    }
}
