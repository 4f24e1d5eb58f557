<?php

declare(strict_types=1);

namespace Weft\Bench\Process;

/**
 * Every child the runner started and has not finished with. Whatever happens to a row (failure,
 * exception, Ctrl-C), terminateAll() leaves no process behind.
 */
final class ProcessList
{
    /** @var array<int, Process> */
    private array $processes = [];

    /**
     * @param list<string> $command
     * @param array<string, string>|null $env
     */
    public function start(array $command, string $stdoutFile, string $stderrFile, ?array $env = null, ?string $cwd = null): Process
    {
        $process = new Process($command, $stdoutFile, $stderrFile, $env, $cwd);
        $this->processes[\spl_object_id($process)] = $process;
        return $process;
    }

    public function forget(Process $process): void
    {
        unset($this->processes[\spl_object_id($process)]);
    }

    /** Stops the newest first: load generators before the servers they load. */
    public function terminateAll(float $grace = 2.0): int
    {
        $count = 0;
        foreach (\array_reverse($this->processes, true) as $id => $process) {
            $process->terminate($grace);
            unset($this->processes[$id]);
            $count++;
        }
        return $count;
    }

    public function count(): int
    {
        return \count($this->processes);
    }
}
