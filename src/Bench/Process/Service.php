<?php

declare(strict_types=1);

namespace Weft\Bench\Process;

/**
 * A child process that serves on a port it announces with a line "READY <port>" on stdout: a Weft server,
 * the delay server, the core echo server. start() waits for that line, never for a fixed time.
 */
final class Service
{
    private function __construct(
        public readonly Process $process,
        public readonly int $port,
        private readonly ProcessList $list,
        private readonly ?string $pidFile,
        private readonly ?\Closure $gracefulStop,
    ) {
    }

    /**
     * @param list<string> $command
     * @param array<string, string>|null $env
     * @param null|\Closure(self): ?Process $gracefulStop starts the graceful stop (e.g. bin/weft stop)
     * @param null|\Closure(string): ?string $doomed reads the process's stderr so far and says why it will
     *        never be ready (e.g. its application does not load), or null: start() fails at once instead of
     *        waiting out $timeout
     * @throws ServiceFailed when the process exits or stays silent before announcing its port
     */
    public static function start(
        ProcessList $list,
        array $command,
        string $logBase,
        ?array $env = null,
        float $timeout = 20.0,
        ?string $pidFile = null,
        ?\Closure $gracefulStop = null,
        ?\Closure $doomed = null,
    ): self {
        $process = $list->start($command, "$logBase.out", "$logBase.log", $env);
        $deadline = \microtime(true) + $timeout;
        $nextLook = 0.0;
        while (true) {
            if (\preg_match('/^READY (\d+)\s*$/m', $process->stdout(), $m)) {
                return new self($process, (int) $m[1], $list, $pidFile, $gracefulStop);
            }
            if (!$process->isRunning()) {
                $reason = $process->stderrTail(3) ?: \trim($process->stdout());
                $code = $process->exitCode();
                $process->terminate(0.5);
                $list->forget($process);
                throw new ServiceFailed("exited with code $code before it was ready" . ($reason !== '' ? ": $reason" : ''));
            }
            if ($doomed !== null && \microtime(true) >= $nextLook) {
                $nextLook = \microtime(true) + 0.1;
                $why = $doomed((string) @\file_get_contents($process->stderrFile));
                if ($why !== null) {
                    $process->terminate(1.0);
                    $list->forget($process);
                    throw new ServiceFailed($why, ServiceFailed::DOOMED);
                }
            }
            if (\microtime(true) >= $deadline) {
                $reason = $process->stderrTail(3);
                $process->terminate(1.0);
                $list->forget($process);
                throw new ServiceFailed("not ready after {$timeout} s" . ($reason !== '' ? ": $reason" : ''));
            }
            \usleep(10_000);
        }
    }

    public function pid(): int
    {
        return $this->process->pid();
    }

    /**
     * A Weft server's `status` (what `bin/weft status --json` prints: the master and each worker's
     * latest figures, reported about once a second), or null when it has no control socket or does not answer.
     *
     * @return ?array<string, mixed>
     */
    public function status(float $timeout = 5.0): ?array
    {
        return $this->pidFile === null ? null : \Weft\Server\ControlSocket::ask($this->pidFile . '.sock', 'status', $timeout);
    }

    /**
     * Stops gracefully (the given stop closure, else SIGTERM), waits up to $timeout seconds, then kills
     * what is left of the process tree. Returns a note for the row when something had to be killed.
     */
    public function stop(float $timeout = 10.0): ?string
    {
        $snapshot = $this->process->snapshot();
        $stopper = null;
        if ($this->process->isRunning()) {
            $stopper = $this->gracefulStop !== null ? ($this->gracefulStop)($this) : null;
            if ($stopper === null) {
                $this->process->signalGroup(\SIGTERM);
            }
        }
        // Polling isRunning() reaps the server as soon as it exits: a zombie would look alive to the
        // stop command, which probes the pid with kill(0).
        $deadline = \microtime(true) + $timeout;
        while (\microtime(true) < $deadline && ($this->process->isRunning() || ($stopper?->isRunning() ?? false))) {
            \usleep(10_000);
        }
        $graceful = !$this->process->isRunning();
        if ($stopper !== null) {
            $stopper->terminate(0.5);
            $this->list->forget($stopper);
        }
        // Give processes that outlive their master (e.g. nginx, php-fpm children) a moment to go by themselves.
        $deadline = \microtime(true) + 1.0;
        while (\microtime(true) < $deadline && $this->stillRunning($snapshot) > 0) {
            \usleep(20_000);
        }
        $killed = $this->process->killRemaining($snapshot);
        $this->process->close();
        $this->list->forget($this->process);
        if ($this->pidFile !== null) {
            @\unlink($this->pidFile);
        }
        return match (true) {
            !$graceful => "did not stop within {$timeout} s; killed",
            $killed > 0 => "$killed process(es) left after the graceful stop were killed",
            default => null,
        };
    }

    /** @param array<int, int|null> $snapshot */
    private function stillRunning(array $snapshot): int
    {
        $alive = 0;
        foreach ($snapshot as $pid => $start) {
            if ($start !== null && ProcessTree::startTime($pid) === $start) {
                $alive++;
            }
        }
        return $alive;
    }
}
