<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\WeftException;

/** A pid file, control socket or log path that another user could use against us: refused. */
final class UnsafePath extends \RuntimeException implements WeftException
{
}
