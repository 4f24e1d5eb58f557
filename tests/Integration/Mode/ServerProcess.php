<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Mode;

/**
 * `bin/weft serve ...` as a child process: started, waited for until it prints "READY <port>",
 * stopped at the end of the test whatever happens. Its stderr goes to a file, so it never blocks.
 */
final class ServerProcess
{
    public const BIN = __DIR__ . '/../../../bin/weft';

    /** @var resource */
    private mixed $process;
    /** @var resource */
    private mixed $stdout;
    private readonly string $stderrFile;
    public readonly int $port;
    private ?int $exitCode = null;

    /**
     * @param list<string> $args after "bin/weft"
     * @param array<string, string> $env added to this process's environment
     */
    private function __construct(array $args, array $env)
    {
        $this->stderrFile = (string) \tempnam(\sys_get_temp_dir(), 'weft-stderr-');
        $process = \proc_open(
            [\PHP_BINARY, self::BIN, ...$args],
            [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['file', $this->stderrFile, 'a']],
            $pipes,
            null,
            $env + \getenv(),
        );
        if ($process === false) {
            throw new \RuntimeException('cannot start bin/weft');
        }
        $this->process = $process;
        $this->stdout = $pipes[1];
    }

    /**
     * @param list<string> $args after "bin/weft"
     * @param array<string, string> $env
     */
    public static function start(array $args, array $env = [], float $timeout = 90.0): self
    {
        $server = new self($args, $env);
        $line = $server->readLine($timeout);
        if ($line === null || \preg_match('/^READY (\d+)$/', $line, $m) !== 1) {
            $server->kill();
            throw new \RuntimeException("bin/weft did not print READY (got '" . ($line ?? 'EOF/timeout') . "'):\n" . $server->stderr());
        }
        $server->port = (int) $m[1];
        return $server;
    }

    /**
     * Runs bin/weft to completion.
     *
     * @param list<string> $args
     * @param array<string, string> $env
     * @return array{0: int, 1: string, 2: string} exit code, stdout, stderr
     */
    public static function run(array $args, array $env = [], float $timeout = 90.0): array
    {
        $server = new self($args, $env);
        $out = '';
        $deadline = \microtime(true) + $timeout;
        while (!\feof($server->stdout) && \microtime(true) < $deadline) {
            $read = [$server->stdout];
            $write = $except = null;
            if (@\stream_select($read, $write, $except, 0, 100_000) > 0) {
                $out .= (string) \fread($server->stdout, 65536);
            }
        }
        $code = $server->wait(\max(1.0, $deadline - \microtime(true)));
        if ($code === null) {
            $server->kill();
            throw new \RuntimeException('bin/weft ' . \implode(' ', $args) . " did not finish within {$timeout} s");
        }
        return [$code, $out, $server->stderr()];
    }

    public function pid(): int
    {
        return (int) \proc_get_status($this->process)['pid'];
    }

    public function stderr(): string
    {
        return (string) @\file_get_contents($this->stderrFile);
    }

    /** The exit code, or null if still running at the deadline. */
    public function wait(float $timeout): ?int
    {
        $deadline = \microtime(true) + $timeout;
        while ($this->exitCode === null) {
            $status = \proc_get_status($this->process);
            if (!$status['running']) {
                $this->exitCode = $status['signaled'] ? 128 + $status['termsig'] : $status['exitcode'];
                break;
            }
            if (\microtime(true) >= $deadline) {
                return null;
            }
            \usleep(10_000);
        }
        return $this->exitCode;
    }

    public function signal(int $signal): void
    {
        if ($this->exitCode === null) {
            @\posix_kill($this->pid(), $signal);
        }
    }

    /** Stops it the way Ctrl-C would, then for sure. */
    public function kill(): void
    {
        if ($this->wait(0) !== null) {
            return;
        }
        $this->signal(\SIGTERM);
        if ($this->wait(30.0) === null) {
            $this->signal(\SIGKILL);
            $this->wait(10.0);
        }
    }

    public function __destruct()
    {
        $this->kill();
        @\fclose($this->stdout);
        @\unlink($this->stderrFile);
    }

    private function readLine(float $timeout): ?string
    {
        $deadline = \microtime(true) + $timeout;
        $line = '';
        while (\microtime(true) < $deadline) {
            $read = [$this->stdout];
            $write = $except = null;
            if (@\stream_select($read, $write, $except, 0, 100_000) > 0) {
                $byte = \fread($this->stdout, 1);
                if ($byte === '' || $byte === false) {
                    return null;
                }
                if ($byte === "\n") {
                    return $line;
                }
                $line .= $byte;
            }
        }
        return null;
    }
}
