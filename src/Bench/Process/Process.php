<?php

declare(strict_types=1);

namespace Weft\Bench\Process;

/**
 * A child process of the bench runner. It starts in a session (and process group) of its own via
 * setsid, so that Ctrl-C on the terminal reaches only the runner, which then stops its children in
 * order, and so that the whole group can be killed when a graceful stop does not work. Output goes to
 * files, never to pipes: a chatty child can never block on a full pipe nobody reads.
 */
final class Process
{
    /** @var resource */
    private mixed $handle;
    private int $pid;
    private ?int $exitCode = null;
    private bool $closed = false;

    /**
     * @param list<string> $command
     * @param array<string, string>|null $env null: inherit the runner's environment
     */
    public function __construct(
        public readonly array $command,
        public readonly string $stdoutFile,
        public readonly string $stderrFile,
        ?array $env = null,
        ?string $cwd = null,
    ) {
        $handle = @\proc_open(
            ['setsid', ...$command],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', $stdoutFile, 'w'], 2 => ['file', $stderrFile, 'w']],
            $pipes,
            $cwd,
            $env,
        );
        if ($handle === false) {
            throw new \RuntimeException('Cannot start ' . \implode(' ', $command) . ': ' . (\error_get_last()['message'] ?? 'proc_open failed'));
        }
        $this->handle = $handle;
        $this->pid = (int) \proc_get_status($handle)['pid'];
    }

    /** The pid, which is also the process group and session id (setsid execs in place, no fork). */
    public function pid(): int
    {
        return $this->pid;
    }

    public function isRunning(): bool
    {
        if ($this->exitCode !== null || $this->closed) {
            return false;
        }
        $status = \proc_get_status($this->handle);
        if ($status['running']) {
            return true;
        }
        // proc_get_status() reports the exit code only once: keep it.
        $this->exitCode = $status['signaled'] ? 128 + (int) $status['termsig'] : (int) $status['exitcode'];
        return false;
    }

    public function exitCode(): ?int
    {
        $this->isRunning();
        return $this->exitCode;
    }

    /** Waits up to $timeout seconds for the process to exit; true if it did. */
    public function wait(float $timeout, ?\Closure $tick = null, float $tickEvery = 0.5): bool
    {
        $deadline = \microtime(true) + $timeout;
        $nextTick = \microtime(true) + $tickEvery;
        while ($this->isRunning()) {
            $now = \microtime(true);
            if ($now >= $deadline) {
                return false;
            }
            if ($tick !== null && $now >= $nextTick) {
                $tick();
                $nextTick += $tickEvery;
            }
            \usleep(10_000);
        }
        return true;
    }

    /** Sends a signal to every process of its group. */
    public function signalGroup(int $signal): void
    {
        @\posix_kill(-$this->pid, $signal);
    }

    public function groupAlive(): bool
    {
        $this->isRunning();
        return @\posix_kill(-$this->pid, 0);
    }

    /**
     * SIGTERM to the group, then SIGKILL to whatever of it and its session still lives after $grace
     * seconds; finally reaps the process.
     */
    public function terminate(float $grace = 2.0): void
    {
        if ($this->closed) {
            return;
        }
        $members = $this->snapshot();
        if ($this->groupAlive()) {
            $this->signalGroup(\SIGTERM);
            $deadline = \microtime(true) + $grace;
            while ($this->groupAlive() && \microtime(true) < $deadline) {
                \usleep(10_000);
            }
        }
        $this->killRemaining($members);
        $this->close();
    }

    /**
     * Kills (SIGKILL) every process left of the group, of the tree and of a snapshot taken earlier (the
     * same pid with the same start time), and returns how many there were.
     *
     * @param array<int, int|null> $snapshot pid => start time
     */
    public function killRemaining(array $snapshot = []): int
    {
        $killed = 0;
        if ($this->groupAlive()) {
            $this->signalGroup(\SIGKILL);
            $killed++;
        }
        $snapshot += $this->snapshot();
        foreach ($snapshot as $pid => $start) {
            if ($pid !== \getmypid() && $start !== null && ProcessTree::startTime($pid) === $start) {
                @\posix_kill($pid, \SIGKILL);
                $killed++;
            }
        }
        $this->isRunning();
        return $killed;
    }

    /** @return array<int, int|null> every process of the tree and session now: pid => start time */
    public function snapshot(): array
    {
        $members = [];
        foreach (ProcessTree::members($this->pid) as $pid) {
            $members[$pid] = ProcessTree::startTime($pid);
        }
        return $members;
    }

    public function close(): void
    {
        if ($this->closed) {
            return;
        }
        if ($this->isRunning()) {
            @\posix_kill($this->pid, \SIGKILL);
        }
        \proc_close($this->handle);
        $this->closed = true;
    }

    public function stdout(): string
    {
        return (string) @\file_get_contents($this->stdoutFile);
    }

    public function stderrTail(int $lines = 5): string
    {
        $text = \trim((string) @\file_get_contents($this->stderrFile));
        return \implode(' / ', \array_slice(\explode("\n", $text), -$lines));
    }
}
