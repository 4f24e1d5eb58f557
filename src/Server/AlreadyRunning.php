<?php

declare(strict_types=1);

namespace Weft\Server;

/** `serve` found a live Weft master already owning the pid file. */
final class AlreadyRunning extends \RuntimeException
{
}
