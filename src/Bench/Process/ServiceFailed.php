<?php

declare(strict_types=1);

namespace Weft\Bench\Process;

/** A server or helper process did not come up (it exited, or never printed READY <port>). */
final class ServiceFailed extends \RuntimeException implements \Weft\WeftException
{
    /** The code of a failure that will repeat on every start (the application does not load): not worth retrying. */
    public const DOOMED = 1;
}
