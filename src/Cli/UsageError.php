<?php

declare(strict_types=1);

namespace Weft\Cli;

/** Wrong command-line use: printed as one line, exit code 2. */
final class UsageError extends \RuntimeException implements \Weft\WeftException
{
}
