<?php

declare(strict_types=1);

namespace Weft\Http\Fuzz;

use Weft\WeftException;

/** A fuzz case broke a rule: a crash, a disagreement, or a malformed answer. */
final class FuzzFailure extends \RuntimeException implements WeftException
{
}
