<?php

declare(strict_types=1);

namespace Weft\Tests\Support;

use Weft\Cli\PhpRuntime;

/**
 * A real `bin/weft serve` child process for integration tests: waits for its "READY <port>" line (never
 * a sleep), and always cleans up — graceful stop, then SIGKILL of its whole process group.
 */
final class ServerProcess
{
    /** @var resource */
    private $process;
    /** @var array<int, resource> */
    private array $pipes = [];
    public readonly int $port;
    public readonly string $pidFile;
    private string $output = '';
    private ?int $exitCode = null;

    /**
     * @param list<string> $args arguments after `bin/weft serve`
     * @param list<string> $wrapper a command that execs the rest in place (`ip netns exec NS`), so the pid stays the server's
     * @param bool $asTyped start `php bin/weft serve` as a shell would, so that the server restarts PHP
     *   itself with its flags (PhpRuntime): for the tests of that restart
     */
    public function __construct(array $args, array $env = [], float $timeout = 20.0, array $phpOptions = [], ?string $pidFile = null, array $wrapper = [], bool $asTyped = false)
    {
        $this->pidFile = $pidFile ?? \sys_get_temp_dir() . '/weft-test-' . \bin2hex(\random_bytes(4)) . '.pid';
        $root = \dirname(__DIR__, 2);
        $closer = [];
        if (!$asTyped && $phpOptions === [] && self::restartDecidedHere($args, $env)) {
            // Started with the flags it would restart PHP with, and without this runner's descriptors
            // (closed by bash, as PhpRuntime's restart does), the server has no reason to restart: a
            // second PHP start-up less for every server a test starts.
            $phpOptions = PhpRuntime::reexecFlags(['bin/weft', 'serve', ...$args]);
            $closer = ['/bin/bash', '-c', PhpRuntime::SHED_DESCRIPTORS . 'exec "$@"', 'weft'];
        }
        $command = \array_merge(
            ['setsid', ...$wrapper, ...$closer, \PHP_BINARY],
            $phpOptions,
            [$root . '/bin/weft', 'serve'],
            $args,
            \in_array('--port', $args, true) ? [] : ['--port', '0'],
            ['--pid-file', $this->pidFile],
        );
        $environment = $env + \getenv();
        if ($asTyped && !isset($env['WEFT_NO_REEXEC'])) {
            unset($environment['WEFT_NO_REEXEC']); // the restart is what such a test checks: not the runner's to veto
        }
        $this->process = \proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $this->pipes, $root, $environment);
        \stream_set_blocking($this->pipes[1], false);
        \stream_set_blocking($this->pipes[2], false);
        $deadline = \microtime(true) + $timeout;
        while (!\preg_match('/^READY (\d+)$/m', $this->output, $m)) {
            if (\microtime(true) > $deadline || !$this->isRunning()) {
                $this->collect();
                $this->stop();
                throw new \RuntimeException("The server did not become ready:\n" . $this->output);
            }
            $this->collect(0.05);
        }
        $this->port = (int) $m[1];
    }

    /**
     * Whether this runner can tell the flags the server would restart PHP with: not when the choice
     * depends on what it cannot see (a --config file, WEFT_OPCACHE) or is switched off.
     *
     * @param list<string> $args @param array<string, string> $env
     */
    private static function restartDecidedHere(array $args, array $env): bool
    {
        foreach ($args as $arg) {
            if (\str_starts_with($arg, '--config') || \str_starts_with($arg, '--opcache')) {
                return false;
            }
        }
        foreach (['WEFT_OPCACHE', 'WEFT_NO_REEXEC', 'WEFT_CONFIG'] as $name) {
            if (isset($env[$name]) || \getenv($name) !== false) {
                return false;
            }
        }
        return \is_executable('/bin/bash') && \PHP_OS_FAMILY === 'Linux';
    }

    public function address(): string
    {
        return '127.0.0.1:' . $this->port;
    }

    /** Runs `bin/weft ARGS --pid-file ...` and returns [exit code, stdout+stderr]. @return array{int, string} */
    public function control(string $command, array $args = []): array
    {
        return self::cli(\array_merge([$command, '--pid-file', $this->pidFile], $args));
    }

    /** @return array{int, string} */
    public static function cli(array $args, float $timeout = 60.0): array
    {
        $root = \dirname(__DIR__, 2);
        $process = \proc_open(\array_merge([\PHP_BINARY, $root . '/bin/weft'], $args), [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes, $root);
        $out = '';
        $deadline = \microtime(true) + $timeout;
        \stream_set_blocking($pipes[1], false);
        while (true) {
            $read = [$pipes[1]];
            $w = $e = null;
            if (@\stream_select($read, $w, $e, 0, 100_000)) {
                $chunk = \fread($pipes[1], 65536);
                if ($chunk === '' || $chunk === false) {
                    if (\feof($pipes[1])) {
                        break;
                    }
                } else {
                    $out .= $chunk;
                }
            }
            if (\microtime(true) > $deadline) {
                \proc_terminate($process, 9);
                break;
            }
        }
        $code = \proc_close($process);
        return [$code, $out];
    }

    public function masterPid(): int
    {
        return (int) @\file_get_contents($this->pidFile);
    }

    /** @return array<string, mixed> the master's status as JSON */
    public function status(): array
    {
        [$code, $out] = $this->control('status', ['--json']);
        if ($code !== 0) {
            throw new \RuntimeException("status failed: $out");
        }
        return \json_decode($out, true, 512, \JSON_THROW_ON_ERROR);
    }

    /** @return list<int> pids of ready workers */
    public function workerPids(): array
    {
        $pids = [];
        foreach ($this->status()['workers'] as $worker) {
            if ($worker['state'] === 'ready') {
                $pids[] = $worker['pid'];
            }
        }
        \sort($pids);
        return $pids;
    }

    /** Polls until $condition holds (no fixed sleeps in tests); fails after $timeout. */
    public static function waitFor(\Closure $condition, float $timeout = 15.0, string $what = 'condition'): mixed
    {
        $deadline = \microtime(true) + $timeout;
        while (true) {
            $result = $condition();
            if ($result) {
                return $result;
            }
            if (\microtime(true) > $deadline) {
                throw new \RuntimeException("Timed out waiting for $what");
            }
            \usleep(20_000);
        }
    }

    public function output(): string
    {
        $this->collect();
        return $this->output;
    }

    public function isRunning(): bool
    {
        if ($this->exitCode !== null) {
            return false;
        }
        $status = \proc_get_status($this->process);
        if (!$status['running']) {
            $this->exitCode = $status['exitcode'];
            return false;
        }
        return true;
    }

    /**
     * Graceful stop as `weft stop` does it (SIGTERM to the master, then waiting; the command itself has
     * tests of its own), then SIGKILL to the process group as a safety net.
     */
    public function stop(): int
    {
        $pid = \proc_get_status($this->process)['pid'];
        if ($this->isRunning()) {
            @\posix_kill($pid, \SIGTERM);
            $deadline = \microtime(true) + 20;
            while ($this->isRunning() && \microtime(true) < $deadline) {
                $this->collect(0.01);
            }
        }
        if ($this->isRunning()) {
            @\posix_kill(-$pid, \SIGKILL);
        }
        self::waitFor(fn () => !$this->isRunning(), 10, 'the server to exit');
        // Workers of a killed master notice it within a moment; make sure none lingers.
        @\posix_kill(-$pid, \SIGKILL);
        $this->collect();
        @\unlink($this->pidFile);
        return $this->exitCode ?? -1;
    }

    public function __destruct()
    {
        if ($this->isRunning()) {
            $this->stop();
        }
    }

    private function collect(float $wait = 0.0): void
    {
        $read = [$this->pipes[1], $this->pipes[2]];
        $w = $e = null;
        if ($wait > 0) {
            @\stream_select($read, $w, $e, 0, (int) ($wait * 1e6));
        }
        foreach ([1, 2] as $i) {
            while (\is_resource($this->pipes[$i]) && ($chunk = \fread($this->pipes[$i], 65536)) !== false && $chunk !== '') {
                $this->output .= $chunk;
            }
        }
    }
}
