<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\Loop\Driver;
use Weft\Loop\Loop;
use Weft\Socket\Listener;
use Weft\Socket\ListenOptions;
use Weft\Socket\Socket;

use function Weft\go;

/**
 * The master process: binds the listening socket once, forks the workers, and supervises them.
 *
 * - A worker that dies is replaced at once; one that keeps dying right after start is replaced with a
 *   growing back-off (0.1 s doubling to 10 s), so a broken application does not fork-bomb the machine.
 * - SIGTERM / SIGINT: graceful stop. Workers stop accepting and finish in-flight work within --grace,
 *   then whatever is left is killed.
 * - SIGUSR1: rolling reload. A new generation of workers loads the application afresh; only when all of
 *   them are ready are the old ones told to drain. The listening socket never closes, so no connection
 *   is refused. If the new generation cannot boot, the old one keeps serving.
 * - Workers report their figures over a socket pair every second; `bin/weft status` reads them from
 *   the control socket beside the pid file.
 *
 * The master never loads the application: it only forks, watches and reports.
 */
final class Master
{
    private const BACKOFF_START = 0.1;
    private const BACKOFF_MAX = 10.0;
    /** A worker that lived less than this counts as a failed start. */
    private const HEALTHY_AFTER = 2.0;

    private Driver $driver;
    private Listener $listener;
    private ?Listener $control = null;
    /** @var array<int, WorkerProcess> by pid */
    private array $workers = [];
    /** @var array<int, int> consecutive failed starts per slot */
    private array $failures = [];
    private int $generation = 1;
    private bool $stopping = false;
    private bool $reloading = false;
    private float $started;
    /** @var list<string> */
    private array $signalWatchers = [];
    private int $restarts = 0;
    private int $reloads = 0;

    public function __construct(private readonly ServerConfig $config, private readonly Logger $logger)
    {
        $this->started = \microtime(true);
    }

    /** Binds the socket. Separate from run() so that a busy port is reported before daemonizing. */
    public function bind(): Listener
    {
        return $this->listener = Listener::listen(
            $this->config->address(),
            ListenOptions::defaults()->withBacklog($this->config->backlog),
        );
    }

    /** @param null|\Closure(string): void $onReady told the bound address once the workers are up */
    public function run(?\Closure $onReady = null): int
    {
        if (!isset($this->listener)) {
            $this->bind();
        }
        $this->driver = Loop::reset($this->config->loop === 'epoll' ? 'auto' : 'select');
        $this->driver->setErrorHandler(function (\Throwable $e): void {
            $this->logger->error('Master error: {message}', ['message' => $e->getMessage(), 'exception' => $e]);
        });
        if (\function_exists('cli_set_process_title')) {
            @\cli_set_process_title("{$this->config->name}: master");
        }
        $this->writePidFile();
        $this->openControlSocket();
        foreach ($this->config->hooks as $hook) {
            $hook->start(fn (): array => $this->status());
        }

        foreach ([\SIGTERM => 'stop', \SIGINT => 'stop', \SIGUSR1 => 'reload', \SIGCHLD => 'reap', \SIGHUP => 'reload', \SIGUSR2 => 'reopenLogs'] as $signal => $action) {
            $this->signalWatchers[] = $this->driver->onSignal($signal, fn () => $this->{$action}());
        }
        for ($slot = 1; $slot <= $this->config->workers; $slot++) {
            $this->spawn($slot);
        }
        $this->logger->info('Weft listening on {address}: {workers} {mode} worker(s), loop {loop}, master pid {pid}', [
            'address' => $this->listener->address(), 'workers' => $this->config->workers,
            'mode' => $this->config->mode, 'loop' => $this->config->loop, 'pid' => \getmypid(),
        ]);
        if ($onReady !== null || $this->config->hooks !== []) {
            $readyCheck = $this->driver->repeat(0.01, function (string $id) use ($onReady): void {
                foreach ($this->workers as $worker) {
                    if (!$worker->ready) {
                        return;
                    }
                }
                $this->driver->cancel($id);
                if ($onReady !== null) {
                    $onReady($this->listener->address());
                }
                $this->event(MasterHook::READY);
            });
            $this->driver->unreference($readyCheck);
        }

        $this->driver->run();
        $this->cleanup();
        $this->logger->info('Weft stopped');
        return 0;
    }

    private function spawn(int $slot): void
    {
        $pair = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        if ($pair === false) {
            $this->logger->error('Cannot create a channel for worker {slot}', ['slot' => $slot]);
            return;
        }
        [$masterEnd, $workerEnd] = $pair;
        $output = WorkerOutput::create();
        $pid = \pcntl_fork();
        if ($pid === -1) {
            $output?->closeAll();
            $this->logger->error('fork() failed for worker {slot}: {error}', ['slot' => $slot, 'error' => \pcntl_strerror(\pcntl_get_last_error())]);
            \fclose($masterEnd);
            \fclose($workerEnd);
            return;
        }
        if ($pid === 0) {
            $this->becomeWorker($slot, $masterEnd, $workerEnd, $output);
        }
        $output?->attach($this->driver, $this->logger, $pid);
        \fclose($workerEnd);
        \stream_set_blocking($masterEnd, false);
        $worker = new WorkerProcess($pid, $slot, $this->generation, \microtime(true), $masterEnd);
        $worker->watcher = $this->driver->onReadable($masterEnd, fn () => $this->readChannel($worker));
        $this->driver->unreference($worker->watcher);
        $worker->output = $output;
        $this->workers[$pid] = $worker;
    }

    /** In the child: drop everything that is the master's, run the worker, never return. */
    private function becomeWorker(int $slot, mixed $masterEnd, mixed $workerEnd, ?WorkerOutput $output): never
    {
        \fclose($masterEnd);
        foreach ($this->workers as $other) {
            @\fclose($other->channel);
            $other->output?->closeAll();
        }
        $this->control?->close();
        foreach ($this->config->hooks as $hook) {
            $hook->forked();
        }
        foreach ([\SIGTERM, \SIGINT, \SIGUSR1, \SIGCHLD, \SIGHUP] as $signal) {
            \pcntl_signal($signal, \SIG_DFL);
        }
        $this->logger->setRole('worker', $this->config->logFile);
        foreach ($output?->redirect($this->logger) ?? [] as $stream) {
            // Its descriptor is held by something else (a daemon's stdio); error_log() and PHP's warnings are still tagged.
            $this->logger->notice("This worker's {stream} is not redirected to the log", ['stream' => $stream]);
        }
        $code = Worker::EXIT_OK;
        try {
            $worker = new Worker($this->config, $this->listener, new Socket($workerEnd), $this->logger, $slot);
            $code = $worker->run();
        } catch (\Throwable $e) {
            $this->logger->critical('Worker crashed: {message}', ['message' => $e->getMessage(), 'exception' => $e]);
            $code = 1;
        }
        exit($code);
    }

    private function readChannel(WorkerProcess $worker): void
    {
        $data = @\fread($worker->channel, 65536);
        if ($data === '' || $data === false) {
            if (\feof($worker->channel)) {
                $this->driver->cancel((string) $worker->watcher);
            }
            return;
        }
        $worker->inbox .= $data;
        while (($end = \strpos($worker->inbox, "\n")) !== false) {
            $line = \substr($worker->inbox, 0, $end);
            $worker->inbox = \substr($worker->inbox, $end + 1);
            $message = \json_decode($line, true);
            if (!\is_array($message)) {
                continue;
            }
            $type = $message['type'] ?? '';
            unset($message['type']);
            if ($message !== []) {
                $worker->stats = $message + $worker->stats;
            }
            if ($type === 'ready') {
                $worker->ready = true;
                $this->onWorkerReady($worker);
            }
        }
    }

    private function onWorkerReady(WorkerProcess $worker): void
    {
        if (!$this->reloading || $worker->generation !== $this->generation) {
            return;
        }
        foreach ($this->workers as $other) {
            if ($other->generation === $this->generation && !$other->ready) {
                return;
            }
        }
        // The whole new generation is up: let the old one drain.
        $old = 0;
        foreach ($this->workers as $other) {
            if ($other->generation < $this->generation && !$other->retiring) {
                $other->retiring = true;
                \posix_kill($other->pid, \SIGTERM);
                $old++;
            }
        }
        $this->reloading = false;
        $this->reloads++;
        $this->event(MasterHook::RELOADED);
        $this->logger->info('Reload: {new} new worker(s) ready, {old} old worker(s) draining', [
            'new' => $this->config->workers, 'old' => $old,
        ]);
    }

    private function reap(): void
    {
        while (($pid = \pcntl_waitpid(-1, $status, \WNOHANG)) > 0) {
            $worker = $this->workers[$pid] ?? null;
            if ($worker === null) {
                continue;
            }
            unset($this->workers[$pid]);
            $this->readChannel($worker);
            foreach ($this->config->hooks as $hook) {
                $hook->workerExited($worker->stats);
            }
            if ($worker->watcher !== null) {
                $this->driver->cancel($worker->watcher);
            }
            @\fclose($worker->channel);
            $worker->output?->close();
            $lived = \microtime(true) - $worker->started;
            $how = \pcntl_wifsignaled($status)
                ? 'killed by signal ' . \pcntl_wtermsig($status)
                : 'exited with code ' . \pcntl_wexitstatus($status);
            $clean = \pcntl_wifexited($status) && \pcntl_wexitstatus($status) === Worker::EXIT_OK;

            if ($this->stopping || $worker->retiring) {
                $this->logger->info('Worker {slot} (pid {pid}) {how}', ['slot' => $worker->slot, 'pid' => $pid, 'how' => $how]);
                continue;
            }
            if ($worker->generation < $this->generation) {
                continue;
            }
            if ($this->reloading && !$worker->ready) {
                // The new generation cannot boot: keep the old one serving.
                $this->abortReload($worker, $how);
                continue;
            }
            $failed = !$clean && $lived < self::HEALTHY_AFTER;
            $this->failures[$worker->slot] = $failed ? ($this->failures[$worker->slot] ?? 0) + 1 : 0;
            $delay = $failed
                ? \min(self::BACKOFF_MAX, self::BACKOFF_START * 2 ** ($this->failures[$worker->slot] - 1))
                : 0.0;
            $level = $clean ? 'info' : 'warning';
            $this->logger->log($level, 'Worker {slot} (pid {pid}) {how} after {lived} s; {action}', [
                'slot' => $worker->slot, 'pid' => $pid, 'how' => $how, 'lived' => \round($lived, 1),
                'action' => $delay > 0 ? "restarting in {$delay} s" : 'restarting',
            ]);
            $this->restarts++;
            $slot = $worker->slot;
            $generation = $this->generation;
            $this->driver->delay($delay, function () use ($slot, $generation): void {
                if (!$this->stopping && $generation === $this->generation) {
                    $this->spawn($slot);
                }
            });
        }
        if ($this->stopping && $this->workers === []) {
            $this->driver->stop();
        }
    }

    private function abortReload(WorkerProcess $failed, string $how): void
    {
        $this->logger->error('Reload failed: a new worker {how} before it was ready; the old workers keep serving', ['how' => $how]);
        foreach ($this->workers as $worker) {
            if ($worker->generation === $this->generation) {
                $worker->retiring = true;
                \posix_kill($worker->pid, \SIGKILL);
            }
        }
        $this->generation--;
        $this->reloading = false;
        $this->event(MasterHook::RELOADED);
    }

    private function reload(): void
    {
        if ($this->stopping || $this->reloading) {
            return;
        }
        $this->reloading = true;
        $this->generation++;
        $this->event(MasterHook::RELOADING);
        $this->logger->info('Reload: starting {n} new worker(s)', ['n' => $this->config->workers]);
        for ($slot = 1; $slot <= $this->config->workers; $slot++) {
            $this->spawn($slot);
        }
    }

    /** SIGUSR2 (logrotate's postrotate): the master and every worker open the log file afresh. */
    private function reopenLogs(): void
    {
        $this->logger->reopen();
        foreach ($this->workers as $worker) {
            \posix_kill($worker->pid, \SIGUSR2);
        }
        $this->logger->info('Log file reopened (SIGUSR2), {n} worker(s) told', ['n' => \count($this->workers)]);
    }

    private function stop(): void
    {
        if ($this->stopping) {
            return;
        }
        $this->stopping = true;
        $this->event(MasterHook::STOPPING);
        $this->logger->info('Stopping: {n} worker(s) finish in-flight work (grace {grace} s)', [
            'n' => \count($this->workers), 'grace' => $this->config->grace,
        ]);
        foreach ($this->workers as $worker) {
            \posix_kill($worker->pid, \SIGTERM);
        }
        $this->driver->delay($this->config->grace + 1.0, function (): void {
            foreach ($this->workers as $worker) {
                $this->logger->warning('Worker {slot} (pid {pid}) still running after the grace period: killing it', [
                    'slot' => $worker->slot, 'pid' => $worker->pid,
                ]);
                \posix_kill($worker->pid, \SIGKILL);
            }
        });
        if ($this->workers === []) {
            $this->driver->stop();
        }
    }

    /** @return array<string, mixed> */
    public function status(): array
    {
        $workers = [];
        foreach ($this->workers as $worker) {
            $workers[] = [
                'slot' => $worker->slot,
                'pid' => $worker->pid,
                'generation' => $worker->generation,
                'state' => $worker->retiring ? 'draining' : ($worker->ready ? 'ready' : 'starting'),
                'uptime' => \round(\microtime(true) - $worker->started, 1),
            ] + $worker->stats;
        }
        \usort($workers, static fn ($a, $b) => [$a['generation'], $a['slot']] <=> [$b['generation'], $b['slot']]);
        return [
            'master' => [
                'pid' => \getmypid(),
                'address' => $this->listener->address(),
                'mode' => $this->config->mode,
                // The backend the workers really run ("auto" resolves in each worker).
                'loop' => ($workers[0]['loop'] ?? null) ?? $this->config->loop,
                'workers' => $this->config->workers,
                'uptime' => \round(\microtime(true) - $this->started, 1),
                'restarts' => $this->restarts,
                'reloads' => $this->reloads,
                'rss' => Stats::rss(),
                'state' => $this->stopping ? 'stopping' : ($this->reloading ? 'reloading' : 'running'),
            ],
            'workers' => $workers,
        ];
    }

    private function openControlSocket(): void
    {
        $path = $this->config->controlPath();
        if ($path === null) {
            return;
        }
        $this->control = Listener::listen('unix://' . $path);
        $control = $this->control;
        $acceptor = go(function () use ($control): void {
            while (true) {
                try {
                    $client = $control->accept();
                } catch (\Throwable) {
                    return;
                }
                go(function () use ($client): void {
                    try {
                        $command = \trim((string) $client->readLine(128, 5.0));
                        $reply = match ($command) {
                            'status' => $this->status(),
                            default => ['error' => "unknown command '$command'"],
                        };
                        $client->write(\json_encode($reply, \JSON_THROW_ON_ERROR | \JSON_PRETTY_PRINT) . "\n", 5.0);
                    } catch (\Throwable) {
                    } finally {
                        $client->close();
                    }
                });
            }
        });
        unset($acceptor);
    }

    private function writePidFile(): void
    {
        $file = $this->config->pidFile;
        if ($file === null) {
            return;
        }
        $existing = @\file_get_contents($file);
        if ($existing !== false && (int) $existing > 0 && (int) $existing !== \getmypid() && @\posix_kill((int) $existing, 0)) {
            throw new \RuntimeException("Weft is already running with pid " . (int) $existing . " (pid file $file)");
        }
        if (@\file_put_contents($file, \getmypid() . "\n") === false) {
            throw new \RuntimeException("Cannot write the pid file '$file'");
        }
    }

    private function event(string $event): void
    {
        foreach ($this->config->hooks as $hook) {
            $hook->event($event);
        }
    }

    private function cleanup(): void
    {
        foreach ($this->config->hooks as $hook) {
            $hook->stop();
        }
        foreach ($this->signalWatchers as $id) {
            $this->driver->cancel($id);
        }
        $this->control?->close();
        $this->listener->close();
        if (($path = $this->config->controlPath()) !== null) {
            @\unlink($path);
        }
        if ($this->config->pidFile !== null && (int) @\file_get_contents($this->config->pidFile) === \getmypid()) {
            @\unlink($this->config->pidFile);
        }
    }
}
