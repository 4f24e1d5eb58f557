<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/** An operation did not finish within its time limit. Its waits were cancelled. */
class Timeout extends \RuntimeException implements \Weft\TimeoutException
{
    /** @internal identifies which Weft\timeout() call fired, so nested timeouts never swallow each other */
    public ?object $token = null;

    public static function after(float $seconds, string $what = 'Operation'): static
    {
        return new static(\sprintf('%s timed out after %s s', $what, self::seconds($seconds)));
    }

    /** How every Weft timeout message writes a duration: at most three decimals, no trailing zeros ("0.25", "2"). */
    final public static function seconds(float $seconds): string
    {
        return \rtrim(\rtrim(\number_format($seconds, 3, '.', ''), '0'), '.');
    }
}
