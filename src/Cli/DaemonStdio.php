<?php

declare(strict_types=1);

namespace Weft\Cli;

use Weft\Server\MasterHook;

/** With --daemon: each worker releases the daemon's stdio before its output is redirected (see Daemon::releaseStdio). */
final class DaemonStdio implements MasterHook
{
    public function start(\Closure $status): void
    {
    }

    public function event(string $event): void
    {
    }

    public function workerExited(array $stats): void
    {
    }

    public function forked(): void
    {
        Daemon::releaseStdio();
    }

    public function stop(): void
    {
    }
}
