<?php

declare(strict_types=1);

namespace Weft\Server;

/** A pid file, control socket or log path that another user could use against us: refused. */
final class UnsafePath extends \RuntimeException
{
}
