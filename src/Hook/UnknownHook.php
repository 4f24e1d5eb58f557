<?php

declare(strict_types=1);

namespace Weft\Hook;

use Weft\WeftException;

/** A `--hooks` list named a kind that does not exist. */
final class UnknownHook extends \InvalidArgumentException implements WeftException
{
}
