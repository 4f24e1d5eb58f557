<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Client\Http;

/**
 * A server in a child process that prints "READY <port>" once it listens; start() waits for that line
 * (never for a fixed time) and stop() ends the process by its pid.
 */
final class ChildProcess
{
    /** @var resource */
    private mixed $process;
    /** @var array<int, resource> */
    private array $pipes;
    public readonly int $port;

    /** @param list<string> $command */
    public function __construct(array $command, float $timeout = 20.0)
    {
        $process = \proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        if ($process === false) {
            throw new \RuntimeException('Cannot start ' . \implode(' ', $command));
        }
        $this->process = $process;
        $this->pipes = $pipes;
        \stream_set_blocking($pipes[1], false);
        \stream_set_blocking($pipes[2], false);
        $deadline = \microtime(true) + $timeout;
        $output = '';
        while (!\preg_match('/^READY (\d+)$/m', $output, $m)) {
            $left = $deadline - \microtime(true);
            if ($left <= 0 || !\proc_get_status($process)['running']) {
                $errors = \stream_get_contents($pipes[2]);
                $this->stop();
                throw new \RuntimeException(\sprintf(
                    'No READY line from %s within %.0f s; stdout: %s; stderr: %s',
                    \implode(' ', $command),
                    $timeout,
                    $output,
                    $errors,
                ));
            }
            $read = [$pipes[1]];
            $write = $except = null;
            if (@\stream_select($read, $write, $except, 0, (int) (\min($left, 0.2) * 1e6)) > 0) {
                $output .= (string) \fread($pipes[1], 8192);
            }
        }
        $this->port = (int) $m[1];
    }

    public function stop(): void
    {
        if (!\is_resource($this->process)) {
            return;
        }
        $status = \proc_get_status($this->process);
        if ($status['running']) {
            \posix_kill($status['pid'], \SIGTERM);
            $deadline = \microtime(true) + 5.0;
            while (\proc_get_status($this->process)['running'] && \microtime(true) < $deadline) {
                \usleep(10_000);
            }
            if (\proc_get_status($this->process)['running']) {
                \posix_kill($status['pid'], \SIGKILL);
            }
        }
        foreach ($this->pipes as $pipe) {
            if (\is_resource($pipe)) {
                \fclose($pipe);
            }
        }
        \proc_close($this->process);
    }

    public function __destruct()
    {
        $this->stop();
    }
}
