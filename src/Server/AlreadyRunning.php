<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\WeftException;

/** `serve` found a live Weft master already owning the pid file. */
final class AlreadyRunning extends \RuntimeException implements WeftException
{
}
