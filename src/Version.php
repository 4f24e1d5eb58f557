<?php

declare(strict_types=1);

namespace Weft;

/**
 * The release of this checkout. Lives at the bottom of the layers so that every layer (the CLI, the
 * benchmark reports) can name it without importing a higher one.
 */
final class Version
{
    public const VERSION = '0.1.0';
}
