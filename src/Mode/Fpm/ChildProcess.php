<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

/**
 * nginx or php-fpm, started by Weft and reaped by it.
 *
 * When util-linux is there, the program runs as `setsid setpriv --pdeathsig TERM -- PROGRAM`: both
 * exec in place (the pid is the program's), setsid makes the program lead its own process group —
 * so a Ctrl-C at the terminal reaches Weft alone, which then stops both gracefully, and one kill of
 * the group takes any orphaned worker with it — and the parent-death signal stops the program if
 * Weft itself is killed with SIGKILL, so nothing is left behind even then.
 */
final class ChildProcess
{
    /** @var resource */
    private mixed $process;
    /** @var array{code: int, signal: int}|null */
    private ?array $exit = null;
    public readonly float $started;

    /** @param resource $process */
    private function __construct(public readonly string $name, mixed $process, public readonly int $pid, private readonly bool $grouped)
    {
        $this->process = $process;
        $this->started = \microtime(true);
    }

    /**
     * @param list<string> $command
     * @param resource $output where the program's stdout and stderr go
     */
    public static function start(string $name, array $command, mixed $output): self
    {
        $grouped = \is_executable('/usr/bin/setsid') && \is_executable('/usr/bin/setpriv');
        if ($grouped) {
            $command = ['/usr/bin/setsid', '/usr/bin/setpriv', '--pdeathsig', 'TERM', '--', ...$command];
        }
        $process = @\proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => $output, 2 => $output], $pipes);
        if ($process === false) {
            throw new \RuntimeException("Cannot start $name: " . (\error_get_last()['message'] ?? 'proc_open failed'));
        }
        $pid = (int) \proc_get_status($process)['pid'];
        return new self($name, $process, $pid, $grouped);
    }

    public function running(): bool
    {
        if ($this->exit !== null) {
            return false;
        }
        $status = \proc_get_status($this->process);
        if ($status['running']) {
            return true;
        }
        // proc_get_status() reports the exit only once: keep it.
        $this->exit = ['code' => (int) $status['exitcode'], 'signal' => $status['signaled'] ? (int) $status['termsig'] : 0];
        \proc_close($this->process);
        return false;
    }

    /** "exited with code 1", "killed by signal 9"; "running" while it runs. */
    public function describeExit(): string
    {
        if ($this->running() || $this->exit === null) {
            return 'running';
        }
        return $this->exit['signal'] > 0 ? 'killed by signal ' . $this->exit['signal'] : 'exited with code ' . $this->exit['code'];
    }

    public function signal(int $signal): void
    {
        if ($this->running()) {
            @\posix_kill($this->pid, $signal);
        }
    }

    /** Signals the program and every process it started, including orphans of a dead master. */
    public function signalAll(int $signal): void
    {
        if ($this->grouped) {
            @\posix_kill(-$this->pid, $signal);
            return;
        }
        $table = ProcessTable::snapshot();
        foreach ($table->children($this->pid) as $child) {
            @\posix_kill($child, $signal);
        }
        $this->signal($signal);
    }

    /** Waits until the program has exited; false if it still runs at the deadline or $abort says so. */
    public function wait(float $timeout, ?\Closure $abort = null): bool
    {
        $deadline = \microtime(true) + $timeout;
        while ($this->running()) {
            if (\microtime(true) >= $deadline || ($abort !== null && $abort())) {
                return false;
            }
            \usleep(10_000);
        }
        return true;
    }

    /** The program's process group still has members (workers of a master that is gone). */
    public function groupAlive(): bool
    {
        return $this->grouped && ProcessTable::snapshot()->group($this->pid) !== [];
    }
}
