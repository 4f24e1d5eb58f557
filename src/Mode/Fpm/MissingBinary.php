<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

/** nginx or php-fpm is not installed; the message names the Debian package that provides it. */
final class MissingBinary extends \RuntimeException implements \Weft\WeftException
{
    /** @param list<string> $tried */
    public static function named(string $program, string $package, array $tried): self
    {
        return new self(\sprintf(
            'fpm mode needs %s, which is not installed (looked for %s); install it with: apt-get install %s',
            $program,
            \implode(', ', $tried),
            $package,
        ));
    }
}
