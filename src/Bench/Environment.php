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
    /** The longest path a Unix socket can be bound to (sun_path holds 108 bytes, its NUL included). */
    private const MAX_SOCKET_PATH = 107;

    /**
     * The resident server processes run with opcache and the tracing JIT on, as `serve` restarts PHP
     * (Cli\PhpRuntime::OPCACHE_FLAGS: the bench may not name the CLI layer; PhpRuntimeInstallTest holds
     * the two together).
     */
    public const PHP_FLAGS = ['opcache.enable_cli=1', 'opcache.jit=tracing', 'opcache.jit_buffer_size=64M', 'opcache.jit_max_root_traces=16384', 'opcache.jit_max_side_traces=1024', 'opcache.jit_max_exit_counters=32768'];
    public const SERVER_CPU = '0';
    public const LOAD_CPU = '1';

    public readonly ProcessList $processes;
    public readonly string $logDir;
    public bool $interrupted = false;
    private int $logCounter = 0;
    /** @var array<string, ?string> server root => why epoll cannot run there (null: it can) */
    private array $epollProblems = [];
    /** The build whose servers the current row starts: null for this checkout, else the --baseline one. */
    private ?Build $build = null;
    /** The next port of --port-range to try. */
    private ?int $nextPort = null;

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

    /**
     * This checkout's bin/weft: the bench's own helpers (load clients, micro benchmarks) always run from
     * here, so a baseline build is loaded by exactly the same clients.
     */
    public function weftBin(): string
    {
        return $this->root . '/bin/weft';
    }

    /** Selects the build the next servers come from (null: this checkout). The Runner sets it per row. */
    public function useBuild(?Build $build): void
    {
        $this->build = $build;
    }

    public function build(): ?Build
    {
        return $this->build;
    }

    /** The checkout servers are started from: this one, or the baseline's while a baseline row runs. */
    public function serverRoot(): string
    {
        return $this->build?->root ?? $this->root;
    }

    /** bin/weft of the build under test (servers, preload scripts). */
    public function serverWeft(): string
    {
        return $this->serverRoot() . '/bin/weft';
    }

    /**
     * A port for the next server: 0 (any free port, announced by the server's READY line) unless the user
     * gave --port-range, in which case the next port of that range nobody listens on. Ports are handed out
     * round-robin so a port a stopped server just left (TIME_WAIT) is not reused at once.
     *
     * @throws \RuntimeException when every port of the range is taken
     */
    public function port(): int
    {
        $range = $this->settings->portRange;
        if ($range === null) {
            return 0;
        }
        [$low, $high] = $range;
        $count = $high - $low + 1;
        $port = $this->nextPort ?? $low;
        for ($i = 0; $i < $count; $i++, $port = $port >= $high ? $low : $port + 1) {
            $probe = @\stream_socket_server("tcp://127.0.0.1:$port", $errno, $error);
            if ($probe !== false) {
                \fclose($probe);
                $this->nextPort = $port >= $high ? $low : $port + 1;
                return $port;
            }
        }
        throw new \RuntimeException("no free port left in --port-range $low-$high");
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
        $path = $this->serverRoot() . '/ext/modules/weft.so';
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

    /**
     * The -d flags of the bench's own helpers (load clients), which run from this checkout (weftBin()):
     * this checkout's extension, whichever build serves the row. With the server's (phpFlags()), a
     * baseline row's client loaded the other build's extension under this build's classes, which do not fit.
     *
     * @return list<string>
     */
    public function clientPhpFlags(): array
    {
        $flags = [];
        foreach (self::PHP_FLAGS as $flag) {
            $flags[] = '-d';
            $flags[] = $flag;
        }
        $extension = $this->root . '/ext/modules/weft.so';
        if (\is_file($extension)) {
            $flags[] = '-d';
            $flags[] = "extension=$extension";
        }
        return $flags;
    }

    /** Whether the helpers (clientPhpFlags()) can run the epoll loop: the same client for every build. */
    public function clientEpoll(): bool
    {
        $key = "client:{$this->root}";
        if (!\array_key_exists($key, $this->epollProblems)) {
            $extension = $this->root . '/ext/modules/weft.so';
            $this->epollProblems[$key] = $this->probeEpoll($this->root, \is_file($extension) ? $extension : null);
        }
        return $this->epollProblems[$key] === null;
    }

    /** Why the epoll loop cannot run here, or null when it can. */
    public function epollUnavailable(): ?string
    {
        $root = $this->serverRoot();
        if (\array_key_exists($root, $this->epollProblems)) {
            return $this->epollProblems[$root];
        }
        return $this->epollProblems[$root] = $this->probeEpoll($root, $this->extensionPath());
    }

    private function probeEpoll(string $root, ?string $extension): ?string
    {
        if ($extension === null) {
            return 'native extension not built (bash scripts/build-ext.sh)';
        }
        $probe = 'require ' . \var_export($root . '/vendor/autoload.php', true) . ';'
            . ' echo Weft\Loop\DriverFactory::epollAvailable() ? "yes" : "no";';
        $output = [];
        \exec(\escapeshellarg($this->php()) . ' -d ' . \escapeshellarg("extension=$extension") . ' -r ' . \escapeshellarg($probe) . ' 2>&1', $output);
        $text = \trim(\implode(' ', $output));
        if (!\str_ends_with($text, 'yes')) {
            return "native extension built but the epoll driver is not available ($text)";
        }
        return null;
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
     * Starts `bin/weft serve APP` of the selected build pinned to the server CPU with the JIT flags, on
     * 127.0.0.1 and a free port (of --port-range when given), and waits for its READY line.
     *
     * @param list<string> $arguments e.g. ['--mode', 'sync', '--workers', '2', '--loop', 'select']
     * @param array<string, string> $env extra environment variables
     */
    public function startWeft(string $app, array $arguments, string $name, array $env = [], float $timeout = 30.0): Service
    {
        $base = $this->logBase($name);
        $pidFile = "$base.pid";
        if (\strlen("$pidFile.sock") > self::MAX_SOCKET_PATH) {
            // The control socket is PIDFILE.sock, and a Unix socket's path has at most 107 bytes: a long
            // --out path or row label would keep the server from starting. Such a pid file goes to the
            // temp directory, named after the row's log files.
            $pidFile = \sys_get_temp_dir() . '/weft-bench-' . \substr(\md5($base), 0, 12) . '.pid';
        }
        $command = [
            ...$this->serverPrefix(), $this->php(), ...$this->phpFlags(), $this->serverWeft(), 'serve', $app,
            // A short grace: once the load is over, nothing in flight is worth waiting for.
            '--host', '127.0.0.1', '--port', (string) $this->port(), '--pid-file', $pidFile, '--grace', '1', ...$arguments,
        ];
        $php = $this->php();
        $weft = $this->serverWeft();
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
            self::bootFailure(...),
        );
    }

    /**
     * Why a starting Weft server will never be ready, from its log so far, or null. Its master keeps
     * restarting a worker that cannot load the application (with a growing delay), so without this a
     * syntax error in the app would cost the whole start timeout of every row and end in a line about
     * restarts instead of the error.
     */
    public static function bootFailure(string $log): ?string
    {
        // "Worker could not load..." (a Weft worker), "Cannot load the application: ..." (an fpm-mode worker).
        if (\preg_match('/(?:could not|Cannot) load the application: (.*)\R(?:\s+at (\S+))?/', $log, $m)) {
            return 'the application could not be loaded: ' . \trim($m[1]) . (isset($m[2]) && $m[2] !== '' ? " (at {$m[2]})" : '');
        }
        // Before the server is ready no request has run: a fatal error of an fpm worker is the app's loading.
        if (\preg_match('/\[fpm worker(?: \d+)?\] \w+: stderr: PHP Fatal error:\s+(.*)/', $log, $m)) {
            return 'the application could not be loaded: PHP Fatal error: ' . \trim($m[1]);
        }
        if (\preg_match('/The readiness request loads the application and expects "pong", but (.*)/', $log, $m)) {
            return 'the application could not be loaded: the fpm worker answered the readiness request, but ' . \trim($m[1]);
        }
        // A worker that ends as it starts (exit() in the app file, a fatal error that kills the process):
        // one restart may be bad luck, three in a row before the server was ever ready are not.
        if (\preg_match_all('/Worker \d+ \(pid \d+\) exited with code (\d+)/', $log, $m) >= 3) {
            $why = \preg_match_all('/\] critical: (.*)/', $log, $critical) > 0 ? ': ' . \trim(\end($critical[1])) : ': does the application file call exit() or die() when it is loaded?';
            return \sprintf('every worker exited as it started (exit code %s) before the server was ready%s', \end($m[1]), $why);
        }
        return null;
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
        return $this->processes->start([...self::closeInherited(), ...$this->loadPrefix(), ...$command], "$base.out", "$base.log", $env === [] ? null : $this->env($env));
    }

    /**
     * A prefix that closes every descriptor but 0, 1 and 2 before the command runs. PHP's proc_open()
     * passes on whatever the runner has open (log files of other processes, and anything its own parent
     * leaked to it), and wrk sizes its event loop for 10 + 3 x connections descriptors: with -c1 a
     * socket numbered 13 or more does not fit, and wrk reports a connect error and sends nothing.
     *
     * @return list<string>
     */
    public static function closeInherited(): array
    {
        if (!\is_executable('/bin/bash') || !\is_dir('/proc/self/fd')) {
            return [];
        }
        return ['/bin/bash', '-c', 'for fd in /proc/$$/fd/*; do fd=${fd##*/}; if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null; fi; done; exec "$@"', 'weft-bench-load'];
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
