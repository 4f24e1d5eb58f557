<?php

declare(strict_types=1);

namespace Weft\Bench;

use Weft\Bench\Process\Process;
use Weft\Bench\Process\ProcessList;
use Weft\Bench\Process\Service;

/**
 * Everything a scenario needs from the machine: where Weft is, how to start a server and a load
 * generator (PHP flags, CPU pinning), the tools found, the output folder, and the list of started
 * processes that must not outlive the run.
 */
final class Environment
{
    /** The resident server processes run with opcache and the tracing JIT on. */
    public const PHP_FLAGS = ['opcache.enable_cli=1', 'opcache.jit=tracing', 'opcache.jit_buffer_size=64M'];
    public const SERVER_CPU = '0';
    public const LOAD_CPU = '1';

    public readonly ProcessList $processes;
    public readonly string $logDir;
    public bool $interrupted = false;
    private int $logCounter = 0;
    private ?string $epollProblem = null;
    private bool $epollChecked = false;

    public function __construct(
        public readonly string $root,
        public readonly string $outDir,
        public readonly Settings $settings,
        public readonly Tools $tools,
        public readonly Machine $machine,
    ) {
        $this->processes = new ProcessList();
        $this->logDir = $outDir . '/logs';
        if (!\is_dir($this->logDir)) {
            \mkdir($this->logDir, 0o777, true);
        }
    }

    public function php(): string
    {
        return \PHP_BINARY;
    }

    public function weftBin(): string
    {
        return $this->root . '/bin/weft';
    }

    /** Server on CPU 0, load on CPU 1: only with two cores or more, and taskset present. */
    public function pinned(): bool
    {
        return $this->machine->cores >= 2 && $this->tools->has('taskset');
    }

    /** How many cores the server side has: the one it is pinned to, or all of them. */
    public function serverCores(): int
    {
        return $this->pinned() ? 1 : $this->machine->cores;
    }

    public function extensionPath(): ?string
    {
        $path = $this->root . '/ext/modules/weft.so';
        return \is_file($path) ? $path : null;
    }

    /** @return list<string> the -d flags every server process gets */
    public function phpFlags(): array
    {
        $flags = [];
        foreach (self::PHP_FLAGS as $flag) {
            $flags[] = '-d';
            $flags[] = $flag;
        }
        $extension = $this->extensionPath();
        if ($extension !== null) {
            $flags[] = '-d';
            $flags[] = "extension=$extension";
        }
        return $flags;
    }

    /** Why the epoll loop cannot run here, or null when it can. */
    public function epollUnavailable(): ?string
    {
        if ($this->epollChecked) {
            return $this->epollProblem;
        }
        $this->epollChecked = true;
        $extension = $this->extensionPath();
        if ($extension === null) {
            return $this->epollProblem = 'native extension not built (bash scripts/build-ext.sh)';
        }
        $probe = 'require ' . \var_export($this->root . '/vendor/autoload.php', true) . ';'
            . ' echo Weft\Loop\DriverFactory::epollAvailable() ? "yes" : "no";';
        $output = [];
        \exec(\escapeshellarg($this->php()) . ' -d ' . \escapeshellarg("extension=$extension") . ' -r ' . \escapeshellarg($probe) . ' 2>&1', $output);
        $text = \trim(\implode(' ', $output));
        if (!\str_ends_with($text, 'yes')) {
            return $this->epollProblem = "native extension built but the epoll driver is not available ($text)";
        }
        return $this->epollProblem = null;
    }

    /** @return list<string> */
    public function serverPrefix(): array
    {
        return $this->pinned() ? ['taskset', '-c', self::SERVER_CPU] : [];
    }

    /** @return list<string> */
    public function loadPrefix(): array
    {
        return $this->pinned() ? ['taskset', '-c', self::LOAD_CPU] : [];
    }

    /** A fresh path prefix for the stdout/stderr files of one process, under logs/. */
    public function logBase(string $name): string
    {
        $this->logCounter++;
        return \sprintf('%s/%03d-%s', $this->logDir, $this->logCounter, \preg_replace('/[^A-Za-z0-9_.-]+/', '-', $name));
    }

    /** @param array<string, string> $extra @return array<string, string> */
    public function env(array $extra = []): array
    {
        $env = \getenv();
        return \array_merge(\is_array($env) ? $env : [], $extra);
    }

    /**
     * Starts `bin/weft serve APP` pinned to the server CPU with the JIT flags, on 127.0.0.1 and a free
     * port, and waits for its READY line.
     *
     * @param list<string> $arguments e.g. ['--mode', 'sync', '--workers', '2', '--loop', 'select']
     * @param array<string, string> $env extra environment variables
     */
    public function startWeft(string $app, array $arguments, string $name, array $env = [], float $timeout = 30.0): Service
    {
        $base = $this->logBase($name);
        $pidFile = "$base.pid";
        $command = [
            ...$this->serverPrefix(), $this->php(), ...$this->phpFlags(), $this->weftBin(), 'serve', $app,
            // A short grace: once the load is over, nothing in flight is worth waiting for.
            '--host', '127.0.0.1', '--port', '0', '--pid-file', $pidFile, '--grace', '1', ...$arguments,
        ];
        $php = $this->php();
        $weft = $this->weftBin();
        $logDir = $this->logDir;
        $processes = $this->processes;
        return Service::start(
            $this->processes,
            $command,
            $base,
            $this->env($env),
            $timeout,
            $pidFile,
            static function () use ($php, $weft, $pidFile, $base, $processes): ?Process {
                if (!\is_file($pidFile)) {
                    return null;
                }
                return $processes->start([$php, $weft, 'stop', '--pid-file', $pidFile, '--timeout', '10'], "$base.stop.out", "$base.stop.log");
            },
        );
    }

    /**
     * Starts a load generator (or any helper) pinned to the load CPU.
     *
     * @param list<string> $command
     * @param array<string, string> $env
     */
    public function startLoad(array $command, string $name, array $env = []): Process
    {
        $base = $this->logBase($name);
        return $this->processes->start([...$this->loadPrefix(), ...$command], "$base.out", "$base.log", $env === [] ? null : $this->env($env));
    }

    /**
     * A skip reason when $processes processes of about $perProcess bytes each would not fit in half of
     * the memory available now (forked workers share much, but a benchmark must not push the machine
     * into swapping or the OOM killer).
     */
    public function memoryRefuses(int $processes, int $perProcess): ?string
    {
        $available = Machine::memAvailable();
        if ($available === null) {
            return null;
        }
        $need = $processes * $perProcess;
        if ($need <= $available / 2) {
            return null;
        }
        return \sprintf(
            'not enough memory: %d processes x ~%d MB = %d MB, more than half of the %d MB available',
            $processes, $perProcess >> 20, $need >> 20, $available >> 20,
        );
    }
}
