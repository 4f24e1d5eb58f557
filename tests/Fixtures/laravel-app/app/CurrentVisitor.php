<?php

declare(strict_types=1);

namespace App;

/** Memoized with once() in a static method, as Laravel's documentation shows: once per request. */
final class CurrentVisitor
{
    public static function name(): string
    {
        return once(static fn (): string => (string) request()->query('visitor'));
    }
}
