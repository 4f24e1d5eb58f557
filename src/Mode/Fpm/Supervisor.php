<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

use Weft\Server\ControlSocket;
use Weft\Server\Logger;
use Weft\Server\PidFile;
use Weft\Server\RuntimeFiles;
use Weft\Server\UnsafePath;

/**
 * Runs nginx and php-fpm for fpm mode and stands in for Weft's master towards `bin/weft`.
 *
 * - Start: configuration into the runtime folder, php-fpm, then nginx; ready once nginx accepts on
 *   the port and a request through it reaches the front controller, which loads the app.
 * - SIGTERM/SIGINT: graceful stop, nginx first (SIGQUIT: in-flight requests finish), then php-fpm
 *   (SIGQUIT); after the grace period SIGTERM, then SIGKILL. The runtime folder goes with them.
 *   A second stop signal skips the rest of the grace period.
 * - SIGHUP/SIGUSR2: reload, SIGUSR2 to php-fpm: its workers are replaced, the app is loaded afresh,
 *   opcache starts empty (see reload()). SIGUSR1: reopen the logs (see reopenLogs()), the convention
 *   of nginx and php-fpm, as in coroutine and sync mode.
 * - `status` on the control socket PIDFILE.sock: the same JSON shape as the Weft master's, the
 *   workers being php-fpm's, from its status page.
 * - A program that dies unexpectedly is logged and restarted, with back-off when it keeps dying.
 */
final class Supervisor
{
    private const BACKOFF_START = 0.5;
    private const BACKOFF_MAX = 10.0;
    private const HEALTHY_AFTER = 10.0;
    private const START_TIMEOUT = 60.0;

    /** @var array<string, ChildProcess|null> started in this order, stopped in the reverse one */
    private array $processes = ['php-fpm' => null, 'nginx' => null];
    /** @var array<string, int> */
    private array $failures = ['php-fpm' => 0, 'nginx' => 0];
    /** @var array<string, float> */
    private array $restartAt = ['php-fpm' => 0.0, 'nginx' => 0.0];
    private int $restarts = 0;
    private string $state = 'starting';
    private int $stopSignals = 0;
    private bool $reloadRequested = false;
    private bool $reopenRequested = false;
    private float $started = 0.0;
    /** @var resource|null */
    private ?ControlSocket $control = null;
    /** @var resource|null */
    private mixed $output = null;
    private ?LogPipe $logPipe = null;
    private ?LogPipe $recordPipe = null;
    private bool $ownsPidFile = false;
    private readonly InternalClient $client;

    public function __construct(
        private readonly FpmSettings $settings,
        private readonly Logger $logger,
        private readonly ?string $pidFile = null,
    ) {
        $this->client = new InternalClient($settings);
    }

    /**
     * @param null|\Closure(int): void $onReady called with the port once requests are answered
     * @return int exit code: 0 after a requested stop, 1 when nginx or php-fpm could not be started
     */
    public function run(?\Closure $onReady = null): int
    {
        $this->started = \microtime(true);
        $this->installSignals();
        try {
            $this->prepare();
            $this->start('php-fpm');
            $this->start('nginx');
            if (!$this->waitUntilReady()) {
                return $this->stopSignals > 0 ? 0 : 1;
            }
            $this->writePidFile();
            $this->openControlSocket();
            $this->state = 'running';
            $this->logger->info('fpm mode ready on {address}: nginx pid {nginx}, php-fpm pid {fpm} with {workers} worker(s), opcache {opcache}{preload}; runtime folder {runtime}', [
                'address' => $this->settings->address(), 'nginx' => $this->processes['nginx']?->pid,
                'fpm' => $this->processes['php-fpm']?->pid, 'workers' => $this->settings->workers,
                'opcache' => $this->settings->opcache ? 'on' : 'off',
                'preload' => $this->settings->preload !== null ? ', preload ' . $this->settings->preload : '',
                'runtime' => $this->settings->runtimeDir,
            ]);
            if ($onReady !== null) {
                $onReady($this->settings->port);
            }
            $this->loop();
            return 0;
        } catch (\Throwable $e) {
            $this->logger->error('fpm mode failed: {message}', ['message' => $e->getMessage()]);
            return 1;
        } finally {
            $this->shutdown();
            $this->cleanup();
        }
    }

    /** @return array<string, mixed> the shape of Weft\Server\Master::status(), plus nginx and php-fpm */
    public function status(): array
    {
        $table = ProcessTable::snapshot();
        $fpm = $this->processes['php-fpm'];
        $nginx = $this->processes['nginx'];
        $fpmStatus = $fpm !== null ? $this->client->fpmStatus() : null;

        $workers = [];
        $workerPids = [];
        foreach ($fpmStatus['processes'] ?? [] as $i => $p) {
            $pid = (int) ($p['pid'] ?? 0);
            $workerPids[] = $pid;
            $request = ($p['request method'] ?? '-') === '-' ? null : $p['request method'] . ' ' . ($p['request uri'] ?? '');
            $workers[] = [
                'slot' => $i + 1,
                'pid' => $pid,
                'state' => self::workerState((string) ($p['state'] ?? '')),
                'fpm_state' => (string) ($p['state'] ?? ''),
                'uptime' => (float) ($p['start since'] ?? 0),
                'requests' => (int) ($p['requests'] ?? 0),
                'memory' => (int) ($p['last request memory'] ?? 0),
                'rss' => $table->rss($pid),
                'request_duration' => \round((int) ($p['request duration'] ?? 0) / 1e6, 6),
                'last_request_cpu' => (float) ($p['last request cpu'] ?? 0),
                'request' => $request,
            ];
        }
        $fpmChildren = $fpm !== null ? $table->children($fpm->pid) : [];
        if ($fpmStatus === null) {
            // No status page (php-fpm restarting, or busy beyond the timeout): what /proc knows.
            foreach ($fpmChildren as $pid) {
                if (ProcessTable::commandLine($pid) === 'php-fpm: pool ' . PhpFpmConfig::POOL) {
                    $workerPids[] = $pid;
                    $workers[] = ['slot' => \count($workers) + 1, 'pid' => $pid, 'state' => 'unknown', 'uptime' => 0.0, 'requests' => 0, 'rss' => $table->rss($pid)];
                }
            }
        }
        $nginxWorkers = $nginx !== null ? $table->children($nginx->pid) : [];
        $nginxRss = $nginx !== null ? $table->rss($nginx->pid) : 0;
        foreach ($nginxWorkers as $pid) {
            $nginxRss += $table->rss($pid);
        }
        $fpmRss = $fpm !== null ? $table->rss($fpm->pid) : 0;
        foreach ($fpmChildren as $pid) {
            $fpmRss += $table->rss($pid);
        }
        $ownRss = $table->rss((int) \getmypid());

        return [
            'master' => [
                'pid' => \getmypid(),
                'address' => $this->settings->address(),
                'mode' => 'fpm',
                'loop' => 'n/a',
                'workers' => $this->settings->workers,
                'uptime' => \round(\microtime(true) - $this->started, 1),
                'restarts' => $this->restarts,
                'rss' => $ownRss,
                'state' => $this->state,
                'total_rss' => $ownRss + $nginxRss + $fpmRss,
                'runtime' => $this->settings->runtimeDir,
                'opcache' => $this->settings->opcache ? 'on' : 'off',
                'preload' => $this->settings->preload,
                'nginx' => [
                    'pid' => $nginx?->pid,
                    'uptime' => $nginx !== null ? \round(\microtime(true) - $nginx->started, 1) : 0.0,
                    'workers' => $nginxWorkers,
                    'rss' => $nginxRss,
                ],
                'php_fpm' => [
                    'pid' => $fpm?->pid,
                    'uptime' => $fpm !== null ? \round(\microtime(true) - $fpm->started, 1) : 0.0,
                    // php-fpm's processes beyond the pool: the one answering pm.status_listen
                    'others' => \array_values(\array_diff($fpmChildren, $workerPids)),
                    'rss' => $fpmRss,
                    'accepted_conn' => $fpmStatus['accepted conn'] ?? null,
                    'listen_queue' => $fpmStatus['listen queue'] ?? null,
                    'max_listen_queue' => $fpmStatus['max listen queue'] ?? null,
                    'max_children_reached' => $fpmStatus['max children reached'] ?? null,
                    'slow_requests' => $fpmStatus['slow requests'] ?? null,
                ],
            ],
            'workers' => $workers,
        ];
    }

    /**
     * php-fpm's words for a worker, as the Weft master's: "Idle", and "Reading headers" for a worker
     * waiting on the connection nginx keeps open to it, are idle; every other state is busy.
     */
    private static function workerState(string $fpmState): string
    {
        return match ($fpmState) {
            'Idle', 'Reading headers' => 'idle',
            '' => 'unknown',
            default => 'busy',
        };
    }

    private function prepare(): void
    {
        $logFile = $this->settings->logFile;
        try {
            // The same rules as the logger's own stream: 0640, never through a planted symlink.
            $this->output = $logFile !== null ? RuntimeFiles::openLog($logFile) : \STDERR;
        } catch (UnsafePath $e) {
            throw new \RuntimeException("Cannot open the log file '$logFile': " . $e->getMessage(), 0, $e);
        }
        RuntimeDirectory::create($this->settings->runtimeDir);
        $this->logPipe = LogPipe::create($this->settings->logPipe());
        $this->recordPipe = LogPipe::create($this->settings->recordPipe(), true);
        \file_put_contents($this->settings->path('nginx.conf'), NginxConfig::render($this->settings));
        \file_put_contents($this->settings->path('php-fpm.conf'), PhpFpmConfig::render($this->settings));
    }

    private function start(string $name): void
    {
        $s = $this->settings;
        if ($name === 'nginx') {
            // nginx refuses to bind a Unix socket left by an nginx that was killed.
            @\unlink($s->internalSocket());
            $command = [$s->nginx, '-p', $s->runtimeDir . '/', '-c', $s->path('nginx.conf'), '-e', 'stderr'];
        } else {
            $command = PhpFpmConfig::command($s);
        }
        $this->processes[$name] = ChildProcess::start($name, $command, $this->output);
    }

    private function waitUntilReady(): bool
    {
        $deadline = \microtime(true) + self::START_TIMEOUT;
        $odd = false;
        while (true) {
            if ($this->stopSignals > 0) {
                $this->logger->info('Stop requested while starting');
                return false;
            }
            foreach ($this->processes as $name => $process) {
                if ($process !== null && !$process->running()) {
                    $this->logger->error('{name} {how} while starting; its messages are in {where}', [
                        'name' => $name, 'how' => $process->describeExit(),
                        'where' => $this->settings->logFile ?? 'the output above',
                    ]);
                    return false;
                }
            }
            // The workers' records while starting too: an app that cannot load says so now, not at exit.
            $this->logPipe?->forward($this->logger, $this->output);
            $this->recordPipe?->forward($this->logger, $this->output);
            // php-fpm's socket first: a probe before it exists only earns a [crit] line from nginx.
            if (\file_exists($this->settings->fpmSocket()) && $this->portOpen()) {
                $reply = $this->client->pingReply();
                if (InternalClient::isPong($reply)) {
                    return true;
                }
                if (!$odd && $reply !== null && $reply[0] === 200) {
                    // The worker answered, but not what loading the app and answering leads to: the app file
                    // ended the request itself (exit() or die() at load leave an empty 200).
                    $odd = true;
                    $this->logger->warning('The readiness request loads the application and expects "pong", but got status 200 with {bytes} byte(s): does the application file call exit() or die() when it is loaded?', ['bytes' => \strlen($reply[1])]);
                }
            }
            if (\microtime(true) >= $deadline) {
                $this->logger->error('nginx and php-fpm did not answer within {s} s', ['s' => self::START_TIMEOUT]);
                return false;
            }
            \usleep(20_000);
        }
    }

    private function portOpen(): bool
    {
        $socket = @\stream_socket_client('tcp://' . $this->settings->connectAddress(), $errno, $error, 1.0);
        if ($socket === false) {
            return false;
        }
        \fclose($socket);
        return true;
    }

    private function loop(): void
    {
        while ($this->stopSignals === 0) {
            $read = $this->control === null ? [] : [$this->control->resource()];
            foreach ([$this->logPipe, $this->recordPipe] as $pipe) {
                if ($pipe !== null) {
                    $read[] = $pipe->resource();
                }
            }
            $write = $except = null;
            if (@\stream_select($read, $write, $except, 0, 250_000) > 0 && $this->control !== null && \in_array($this->control->resource(), $read, true)) {
                $this->control->answerWaiting(['status' => $this->status(...)], function (\Throwable $e): void {
                    $this->logger->warning('Control socket: {message}', ['message' => $e->getMessage()]);
                });
            }
            $this->logPipe?->forward($this->logger, $this->output);
            $this->recordPipe?->forward($this->logger, $this->output);
            if ($this->reopenRequested) {
                $this->reopenRequested = false;
                $this->reopenLogs();
            }
            if ($this->reloadRequested) {
                $this->reloadRequested = false;
                $this->reload();
            }
            $this->supervise();
        }
    }

    private function supervise(): void
    {
        $now = \microtime(true);
        foreach ($this->processes as $name => $process) {
            if ($this->stopSignals > 0) {
                return;
            }
            if ($process !== null) {
                if ($process->running()) {
                    continue;
                }
                $lived = $now - $process->started;
                // Workers of a master that died would hold on to the old sockets: they go too.
                $process->signalAll(\SIGKILL);
                $this->failures[$name] = $lived >= self::HEALTHY_AFTER ? 1 : $this->failures[$name] + 1;
                $delay = \min(self::BACKOFF_MAX, self::BACKOFF_START * 2 ** ($this->failures[$name] - 1));
                $this->logger->warning('{name} (pid {pid}) {how} after {lived} s; restarting it in {delay} s', [
                    'name' => $name, 'pid' => $process->pid, 'how' => $process->describeExit(),
                    'lived' => \round($lived, 1), 'delay' => $delay,
                ]);
                $this->processes[$name] = null;
                $this->restartAt[$name] = $now + $delay;
                continue;
            }
            if ($now < $this->restartAt[$name]) {
                continue;
            }
            try {
                $this->start($name);
                $this->restarts++;
                $this->logger->info('{name} restarted, pid {pid}', ['name' => $name, 'pid' => $this->processes[$name]?->pid]);
            } catch (\Throwable $e) {
                $this->failures[$name]++;
                $this->restartAt[$name] = $now + self::BACKOFF_MAX;
                $this->logger->error('Cannot restart {name}: {message}', ['name' => $name, 'message' => $e->getMessage()]);
            }
        }
    }

    /**
     * php-fpm only: its workers finish their requests and are replaced, and the new ones load the
     * application afresh. nginx is left alone on purpose: its configuration has not changed, and its
     * reload (SIGHUP) closes idle keep-alive client connections, which a client that does not retry
     * (wrk, ab) counts as errors. nginx itself retries a request whose php-fpm connection a quitting
     * worker reset (see NginxConfig), so a reload under load costs no request.
     */
    private function reload(): void
    {
        $this->logger->info('Reload: php-fpm replaces its workers (SIGUSR2); the application is loaded afresh');
        $this->processes['php-fpm']?->signal(\SIGUSR2);
    }

    /**
     * SIGUSR1 (logrotate): the supervisor reopens --log-file and php-fpm its error_log (SIGUSR1); the
     * front controller opens the file per request anyway. nginx keeps its stderr, the old file, until
     * it restarts: it logs only its own errors there.
     */
    private function reopenLogs(): void
    {
        $this->logger->reopen();
        if ($this->settings->logFile !== null) {
            try {
                $output = RuntimeFiles::openLog($this->settings->logFile);
            } catch (UnsafePath) {
                $output = null; // the logger's reopen said why; both keep the old file
            }
            if ($output !== null) {
                $old = $this->output;
                $this->output = $output;
                if (\is_resource($old) && $old !== \STDERR) {
                    \fclose($old);
                }
            }
        }
        $this->processes['php-fpm']?->signal(\SIGUSR1);
        $this->logger->info('Log file reopened (SIGUSR1)');
    }

    private function shutdown(): void
    {
        $this->state = 'stopping';
        $hurry = fn (): bool => $this->stopSignals > 1;
        foreach (\array_reverse($this->processes) as $name => $process) {
            if ($process === null) {
                continue;
            }
            if ($process->running()) {
                // SIGQUIT is the graceful stop for both: nginx lets in-flight requests finish (and so
                // php-fpm is idle once nginx is gone), php-fpm lets busy workers finish theirs.
                $process->signal(\SIGQUIT);
                if (!$process->wait($this->settings->grace + 2.0, $hurry)) {
                    $this->logger->warning('{name} (pid {pid}) still running after the grace period: terminating it', ['name' => $name, 'pid' => $process->pid]);
                    $process->signal(\SIGTERM);
                    if (!$process->wait(3.0)) {
                        $process->signalAll(\SIGKILL);
                        $process->wait(3.0);
                    }
                }
                $this->logger->info('{name} (pid {pid}) {how}', ['name' => $name, 'pid' => $process->pid, 'how' => $process->describeExit()]);
            }
            if ($process->groupAlive()) {
                $process->signalAll(\SIGKILL);
            }
            $this->processes[$name] = null;
        }
        foreach ([$this->logPipe, $this->recordPipe] as $pipe) {
            $pipe?->forward($this->logger, $this->output);
            $pipe?->close();
        }
        $this->logPipe = $this->recordPipe = null;
    }

    private function installSignals(): void
    {
        \pcntl_async_signals(true);
        $stop = function (): void {
            $this->stopSignals++;
        };
        $reload = function (): void {
            $this->reloadRequested = true;
        };
        \pcntl_signal(\SIGTERM, $stop);
        \pcntl_signal(\SIGINT, $stop);
        \pcntl_signal(\SIGHUP, $reload);
        \pcntl_signal(\SIGUSR2, $reload);
        \pcntl_signal(\SIGUSR1, function (): void {
            $this->reopenRequested = true;
        });
        // Only to interrupt the wait in loop() at once when nginx or php-fpm dies.
        \pcntl_signal(\SIGCHLD, static function (): void {
        });
    }

    private function writePidFile(): void
    {
        if ($this->pidFile === null) {
            return;
        }
        // O_EXCL, 0600, never through a symlink; a live master owning it is refused (PidFile::claim).
        (new PidFile($this->pidFile))->claim((int) \getmypid());
        $this->ownsPidFile = true;
    }

    private function openControlSocket(): void
    {
        if ($this->pidFile === null) {
            return;
        }
        $this->control = ControlSocket::open($this->pidFile . '.sock');
    }

    private function cleanup(): void
    {
        $this->control?->remove();
        $this->control = null;
        if ($this->ownsPidFile && $this->pidFile !== null) {
            (new PidFile($this->pidFile))->release((int) \getmypid());
        }
        RuntimeDirectory::remove($this->settings->runtimeDir);
        if (\is_resource($this->output) && $this->output !== \STDERR) {
            \fclose($this->output);
        }
        foreach ([\SIGTERM, \SIGINT, \SIGUSR1, \SIGUSR2, \SIGHUP, \SIGCHLD] as $signal) {
            \pcntl_signal($signal, \SIG_DFL);
        }
    }
}
