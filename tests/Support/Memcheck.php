<?php

declare(strict_types=1);

namespace Weft\Tests\Support;

/**
 * Whether this run is under scripts/ext-memcheck.sh (valgrind: ~50x slower). Such a run also fuzzes the
 * native path itself (bin/weft fuzz: mutated requests, whole connections, generated responses), so the
 * tests that generate many cases of the same kind run fewer of them there.
 */
final class Memcheck
{
    public static function active(): bool
    {
        return \getenv('WEFT_MEMCHECK') === '1';
    }

    /** $cases natively, $underValgrind under the script. */
    public static function cases(int $cases, int $underValgrind): int
    {
        return self::active() ? $underValgrind : $cases;
    }
}
