<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\Loop\Driver;
use Weft\Loop\DriverFactory;
use Weft\Loop\Loop;
use Weft\Socket\Listener;
use Weft\Socket\ListenOptions;


/**
 * The master process: binds the listening socket once, forks the workers, and supervises them.
 *
 * - A worker that dies is replaced at once; one that keeps dying right after start is replaced with a
 *   growing back-off (0.1 s doubling to 10 s), so a broken application does not fork-bomb the machine.
 * - SIGTERM / SIGINT: graceful stop. Workers stop accepting and finish in-flight work within --grace,
 *   then whatever is left is killed.
 * - SIGHUP / SIGUSR2: rolling reload. A new generation of workers loads the application afresh; only
 *   when all of them are ready are the old ones told to drain. The listening socket never closes, so no
 *   connection is refused. If the new generation cannot boot, the old one keeps serving.
 * - SIGUSR1: reopen the log files, in the master and every worker (logrotate's postrotate). The same
 *   convention as nginx and php-fpm (USR1 reopens, HUP reloads, php-fpm's USR2 reloads), so a rotation
 *   rule written for them never reloads Weft by mistake.
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
    /** After SIGTERM to a worker that stopped reporting, how long before SIGKILL. */
    private const KILL_AFTER = 2.0;
    /** Silent this long (three missed reports; less with a shorter --worker-timeout), a worker is shown as stuck. */
    private const STUCK_AFTER = 3.0;

    private Driver $driver;
    private Listener $listener;
    private ?ControlSocket $control = null;
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
    /** @var null|\Closure(string): void told why the first generation could not boot */
    private ?\Closure $onStartFailed = null;
    private bool $everReady = false;
    /** Reloads asked for, and the outcome of each finished one (by number): null = success. */
    private int $reloadsRequested = 0;
    /** @var array<int, ?string> */
    private array $reloadOutcomes = [];
    private ?PidFile $pidFile = null;

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

    /** A listener bound beforehand (port 0, whose runtime files are named after the port it got). */
    public function adopt(Listener $listener): void
    {
        $this->listener = $listener;
    }

    /**
     * @param null|\Closure(string): void $onReady told the bound address once the workers are up
     * @param null|\Closure(string): void $onStartFailed told why, when a worker of the first generation
     *        fails to load the application before all are up; the master then stops (a daemon must not
     *        report success, nor linger, when nothing can serve)
     */
    public function run(?\Closure $onReady = null, ?\Closure $onStartFailed = null): int
    {
        if (!isset($this->listener)) {
            $this->bind();
        }
        $this->onStartFailed = $onStartFailed;
        // Every worker is forked from here, all the master's life: a byte the master prints through
        // PHP's output would mark the headers as sent in every worker forked after it.
        $guard = StdoutGuard::install();
        try {
            return $this->supervise($onReady, $onStartFailed);
        } finally {
            $guard->remove();
        }
    }

    /** @see run() */
    private function supervise(?\Closure $onReady, ?\Closure $onStartFailed): int
    {
        $this->driver = Loop::reset($this->config->loop === 'epoll' ? 'auto' : 'select');
        $this->driver->setErrorHandler(function (\Throwable $e): void {
            $this->logger->error('Master error: {message}', ['message' => $e->getMessage(), 'exception' => $e]);
        });
        if (\function_exists('cli_set_process_title')) {
            @\cli_set_process_title("{$this->config->name}: master");
        }
        try {
            $this->writePidFile();
            $this->openControlSocket();
        } catch (\RuntimeException $e) {
            $this->logger->error('Cannot start: {message}', ['message' => $e->getMessage()]);
            $onStartFailed?->__invoke($e->getMessage());
            $this->pidFile?->release((int) \getmypid());
            return 1;
        }
        foreach ($this->config->masterHooks as $hook) {
            $hook->start(fn (): array => $this->status());
        }

        foreach ([\SIGTERM => 'stop', \SIGINT => 'stop', \SIGHUP => 'reload', \SIGUSR2 => 'reload', \SIGCHLD => 'reap', \SIGUSR1 => 'reopenLogs'] as $signal => $action) {
            $this->signalWatchers[] = $this->driver->onSignal($signal, fn () => $this->{$action}());
        }
        for ($slot = 1; $slot <= $this->config->workers; $slot++) {
            $this->spawn($slot);
        }
        if ($this->config->workerTimeout > 0) {
            $this->driver->unreference($this->driver->repeat(1.0, fn () => $this->checkLiveness()));
        }
        $this->logger->info('Weft listening on {address}: {workers} {mode} worker(s), loop {loop}, master pid {pid}', [
            'address' => ($this->config->tls !== null ? 'https://' : '') . $this->listener->address(), 'workers' => $this->config->workers,
            'mode' => $this->config->mode, 'loop' => DriverFactory::resolve($this->config->loop), 'pid' => \getmypid(),
        ]);
        if ($onReady !== null || $this->config->masterHooks !== []) {
            $readyCheck = $this->driver->repeat(0.01, function (string $id) use ($onReady): void {
                // Every slot must hold a ready worker: a slot whose worker crashed at boot is empty while
                // it waits out its back-off, and an empty slot is not "serving".
                $ready = 0;
                foreach ($this->workers as $worker) {
                    if (!$worker->ready) {
                        return;
                    }
                    $ready++;
                }
                if ($ready < $this->config->workers) {
                    return;
                }
                $this->driver->cancel($id);
                $this->everReady = true;
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
        $scoreboard = $this->config->workerTimeout > 0 ? Scoreboard::create() : null;
        $pid = \pcntl_fork();
        if ($pid === -1) {
            $output?->closeAll();
            $this->logger->error('fork() failed for worker {slot}: {error}', ['slot' => $slot, 'error' => \pcntl_strerror(\pcntl_get_last_error())]);
            \fclose($masterEnd);
            \fclose($workerEnd);
            return;
        }
        if ($pid === 0) {
            $this->becomeWorker($slot, $masterEnd, $workerEnd, $output, $scoreboard);
        }
        $output?->attach($this->driver, $this->logger, $pid);
        \fclose($workerEnd);
        $worker = new WorkerProcess($pid, $slot, $this->generation, \microtime(true), new WorkerChannel($masterEnd, $this->driver));
        $worker->channel->listen(
            fn (WorkerMessage $message) => $this->received($worker, $message),
            fn (MalformedMessage $e) => $this->faulty($worker, $e),
            static fn () => null, // its exit is reaped from SIGCHLD
        );
        $worker->output = $output;
        $worker->scoreboard = $scoreboard;
        $this->workers[$pid] = $worker;
    }

    /** In the child: drop everything that is the master's, run the worker, never return. */
    private function becomeWorker(int $slot, mixed $masterEnd, mixed $workerEnd, ?WorkerOutput $output, ?Scoreboard $scoreboard): never
    {
        // PHP's realpath cache, inherited from the master, resolves /proc/self to the master's pid:
        // without this, /proc/self/statm (the worker's rss in status and /metrics) and every
        // /proc/self/* the application reads would describe the master (or nothing, under --daemon).
        \clearstatcache(true);
        \fclose($masterEnd);
        foreach ($this->workers as $other) {
            $other->channel->closeInChild();
            $other->output?->closeAll();
            $other->scoreboard = null; // detached here
        }
        $this->control?->close();
        foreach ($this->config->masterHooks as $hook) {
            $hook->forked();
        }
        foreach ([\SIGTERM, \SIGINT, \SIGUSR2, \SIGCHLD, \SIGHUP] as $signal) {
            \pcntl_signal($signal, \SIG_DFL);
        }
        // The master forwards SIGUSR1 (reopen the logs) to every worker, maybe before this one watches
        // for it: ignored until then rather than fatal. This worker opens the log afresh below anyway.
        \pcntl_signal(\SIGUSR1, \SIG_IGN);
        // Before the log is reopened for this process, which would take descriptor 1 or 2 if free.
        $notRedirected = $output?->redirect($this->logger) ?? [];
        $this->logger->setRole('worker', $this->config->logFile);
        foreach ($notRedirected as $stream) {
            // Its descriptor is held by something else (a daemon's stdio); error_log() and PHP's warnings are still tagged.
            $this->logger->notice("This worker's {stream} is not redirected to the log", ['stream' => $stream]);
        }
        $code = Worker::EXIT_OK;
        try {
            $worker = new Worker($this->config, $this->listener, $workerEnd, $this->logger, $slot, $scoreboard);
            $code = $worker->run();
        } catch (\Throwable $e) {
            $this->logger->critical('Worker crashed: {message}', ['message' => $e->getMessage(), 'exception' => $e]);
            $code = 1;
        }
        exit($code);
    }

    private function received(WorkerProcess $worker, WorkerMessage $message): void
    {
        $worker->lastSeen = \microtime(true);
        if ($worker->stuckSince !== null && $worker->timedOut === null) {
            // It came back (a long computation that ended): no longer stuck.
            $worker->stuckSince = null;
            $this->logger->notice('Worker {slot} (pid {pid}) reports again', ['slot' => $worker->slot, 'pid' => $worker->pid]);
        }
        if ($message->type === WorkerMessage::BOOT_FAILED) {
            $worker->bootError = $message->error;
            return;
        }
        $worker->stats = $message->stats + $worker->stats;
        if ($message->type === WorkerMessage::READY) {
            $worker->ready = true;
            $this->onWorkerReady($worker);
        }
    }

    /**
     * The worker wrote something that is not a message: a bug, or something in the application
     * writing to a descriptor it does not own. The master cannot read it any more, so it is stopped
     * gracefully (in-flight requests finish within --grace) and replaced as a worker that failed.
     */
    private function faulty(WorkerProcess $worker, MalformedMessage $e): void
    {
        if ($worker->fault !== null || $worker->timedOut !== null) {
            return;
        }
        // Already reaped (its last words read after its exit): no process to stop, nor to replace twice.
        $reaped = ($this->workers[$worker->pid] ?? null) !== $worker;
        $worker->fault = 'it sent the master a malformed message: ' . $e->getMessage();
        if (!$worker->ready) {
            $worker->bootError ??= $worker->fault;
        }
        $this->logger->error('Worker {slot} (pid {pid}) sent the master a malformed message ({reason}){action}', [
            'slot' => $worker->slot, 'pid' => $worker->pid, 'reason' => $e->getMessage(), 'action' => $reaped ? '' : ': stopping it',
        ]);
        if ($reaped) {
            return;
        }
        \posix_kill($worker->pid, \SIGTERM);
        $this->driver->delay($this->config->grace + 1.0, function () use ($worker): void {
            if (($this->workers[$worker->pid] ?? null) === $worker) {
                \posix_kill($worker->pid, \SIGKILL);
            }
        });
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
        $this->reloadOutcomes[$this->reloadsRequested] = null;
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
            // Its last words (a boot failure's reason, its final figures) may still be unread.
            $worker->channel->receive();
            $worker->channel->close();
            foreach ($this->config->masterHooks as $hook) {
                $hook->workerExited($worker->stats);
            }
            $worker->output?->close();
            $lived = \microtime(true) - $worker->started;
            $how = \pcntl_wifsignaled($status)
                ? 'killed by signal ' . \pcntl_wtermsig($status)
                : 'exited with code ' . \pcntl_wexitstatus($status);
            if (($why = $worker->timedOut ?? $worker->fault) !== null) {
                $how .= " ($why)";
            }
            $clean = \pcntl_wifexited($status) && \pcntl_wexitstatus($status) === Worker::EXIT_OK && $worker->fault === null;

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
            if (!$this->everReady && !$worker->ready && $this->onStartFailed !== null) {
                // A first-generation worker that ended before it was ready, with its reason or without
                // one (exit() in the app file, a crash while loading): the start has failed.
                $error = $worker->bootError ?? "the worker $how before it was ready (an exit() or a crash while loading the application?)";
                $this->logger->error('Worker {slot} could not load the application: {error}; stopping', ['slot' => $worker->slot, 'error' => $error]);
                $onStartFailed = $this->onStartFailed;
                $this->onStartFailed = null;
                $onStartFailed($error);
                $this->stop();
                continue;
            }
            // A worker that ends before it was ever ready failed to start, even with exit code 0.
            $failed = (!$clean || !$worker->ready) && $lived < self::HEALTHY_AFTER;
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
        $reason = "a new worker $how before it was ready" . ($failed->bootError !== null ? ': ' . $failed->bootError : '');
        $this->reloadOutcomes[$this->reloadsRequested] = $reason;
        $this->logger->error('Reload failed: {reason}; the old workers keep serving', ['reason' => $reason]);
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
        $this->reloadsRequested++;
        $this->generation++;
        $this->event(MasterHook::RELOADING);
        $this->logger->info('Reload: starting {n} new worker(s)', ['n' => $this->config->workers]);
        for ($slot = 1; $slot <= $this->config->workers; $slot++) {
            $this->spawn($slot);
        }
    }

    /** SIGUSR1 (logrotate's postrotate): the master and every worker open the log file afresh. */
    private function reopenLogs(): void
    {
        $this->logger->reopen();
        foreach ($this->workers as $worker) {
            \posix_kill($worker->pid, \SIGUSR1);
        }
        $this->logger->info('Log file reopened (SIGUSR1), {n} worker(s) told', ['n' => \count($this->workers)]);
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
            $stuck = $worker->stuckSince !== null && $worker->fault === null;
            $workers[] = [
                'slot' => $worker->slot,
                'pid' => $worker->pid,
                'generation' => $worker->generation,
                'state' => $stuck ? 'stuck' : ($worker->retiring ? 'draining' : ($worker->ready ? 'ready' : 'starting')),
                'uptime' => \round(\microtime(true) - $worker->started, 1),
            ] + ($stuck ? ['stuck' => [
                'request' => $this->stuckIn($worker),
                'silent' => \round(\microtime(true) - $worker->lastSeen, 1),
            ]] : []) + $worker->stats;
        }
        \usort($workers, static fn ($a, $b) => [$a['generation'], $a['slot']] <=> [$b['generation'], $b['slot']]);
        return [
            'master' => [
                'pid' => \getmypid(),
                'address' => $this->listener->address(),
                'mode' => $this->config->mode,
                // The backend the workers really run ("auto" resolves in each worker).
                'loop' => ($workers[0]['loop'] ?? null) ?? DriverFactory::resolve($this->config->loop),
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
        $this->control = ControlSocket::open($path);
        $this->control->serve(['status' => $this->status(...), 'reload' => $this->reloadAndWait(...)]);
    }

    /**
     * Starts a reload (or joins the one under way) and waits for its outcome: the answer of
     * `bin/weft reload`, which must not report success when the new code cannot load.
     *
     * @return array{ok: bool, error?: string}
     */
    private function reloadAndWait(): array
    {
        if ($this->stopping) {
            return ['ok' => false, 'error' => 'the server is stopping'];
        }
        $this->reload();
        $number = $this->reloadsRequested;
        while (!\array_key_exists($number, $this->reloadOutcomes)) {
            if ($this->stopping) {
                return ['ok' => false, 'error' => 'the server is stopping'];
            }
            \Weft\sleep(0.02);
        }
        $error = $this->reloadOutcomes[$number];
        return $error === null ? ['ok' => true, 'workers' => $this->config->workers] : ['ok' => false, 'error' => $error];
    }

    /**
     * Workers report every second. One silent for a few seconds is shown as stuck (`status` names the
     * request that holds it, which the worker tells on SIGWINCH); one silent for longer than
     * --worker-timeout (an endless loop, a call that never returns, SIGSTOP) is told to give its last
     * words (SIGXCPU: it answers the requests in flight and exits), then SIGKILL shortly after; reap()
     * replaces it.
     */
    private function checkLiveness(): void
    {
        // Read what is waiting first: after the master itself was held up (stopped, starved of CPU),
        // healthy workers' reports sit unread in their channels and must not count as silence.
        foreach ($this->workers as $worker) {
            $worker->channel->receive();
        }
        $now = \microtime(true);
        foreach ($this->workers as $worker) {
            if (!$worker->ready && !$worker->retiring && $worker->timedOut === null && $worker->bootError === null
                && $now - $worker->started > $this->config->workerTimeout) {
                // Still loading the application (a connect without a timeout, a sleep at boot): a reload
                // or a start would wait on it forever. It fails as a boot failure does.
                $worker->bootError = \sprintf('it did not finish loading the application within %s s (--worker-timeout)', $this->config->workerTimeout);
                $worker->timedOut = 'still loading the application, over --worker-timeout';
                $this->logger->error('Worker {slot} (pid {pid}) {error}: killing it', ['slot' => $worker->slot, 'pid' => $worker->pid, 'error' => $worker->bootError]);
                \posix_kill($worker->pid, \SIGKILL);
                continue;
            }
            // A faulty worker is no longer read, so it is silent by now; it is already being stopped.
            if (!$worker->ready || $worker->timedOut !== null || $worker->fault !== null) {
                continue;
            }
            $silent = \round($now - $worker->lastSeen, 1);
            if ($worker->stuckSince === null && $now - $worker->lastSeen > \min(self::STUCK_AFTER, $this->config->workerTimeout)) {
                // Stuck, for `status`; ask it which request holds it (its code answers in the
                // scoreboard if it still runs between opcodes, see Worker::answerWhenStuck()).
                $worker->stuckSince = $now;
                if ($worker->scoreboard !== null) {
                    $worker->scoreboard->running('');
                    \posix_kill($worker->pid, \SIGWINCH);
                }
                $this->logger->warning('Worker {slot} (pid {pid}) has been silent for {silent} s: stuck (--worker-timeout {timeout} s replaces it)', [
                    'slot' => $worker->slot, 'pid' => $worker->pid, 'silent' => $silent, 'timeout' => $this->config->workerTimeout,
                ]);
            }
            if ($now - $worker->lastSeen <= $this->config->workerTimeout) {
                continue;
            }
            $worker->timedOut = "silent for {$silent} s, over --worker-timeout";
            $running = [];
            $reported = [];
            foreach (\is_array($worker->stats['running'] ?? null) ? $worker->stats['running'] : [] as $request) {
                if (\is_array($request) && isset($request['request'], $request['since'])) {
                    $running[] = \sprintf('%s (for %.1f s)', $request['request'], $now - (float) $request['since']);
                    $reported[] = $request['request'];
                }
            }
            // Started after its last report (stuck at once): only the scoreboard knows it.
            $last = $worker->scoreboard?->current();
            if ($last !== null && !\in_array($last, $reported, true)) {
                $running[] = "$last (started after its last report)";
            }
            $held = $worker->scoreboard?->reportedRunning();
            $this->logger->error('Worker {slot} (pid {pid}) has been silent for {silent} s (--worker-timeout {timeout} s) while running {running}: killing it{held}', [
                'slot' => $worker->slot, 'pid' => $worker->pid, 'silent' => $silent, 'timeout' => $this->config->workerTimeout,
                'running' => $running === [] ? 'no request' : \implode(', ', $running),
                'held' => $held !== null ? "; the code running was {$held}'s" : '',
            ]);
            if ($worker->scoreboard !== null) {
                // Its last words: the requests in flight are answered (503, "Connection: close") and
                // it exits (Worker::answerWhenStuck()); else the SIGKILL below.
                \posix_kill($worker->pid, \SIGXCPU);
            } else {
                \posix_kill($worker->pid, \SIGTERM);
            }
            \posix_kill($worker->pid, \SIGCONT);
            $pid = $worker->pid;
            $this->driver->delay(self::KILL_AFTER, function () use ($pid): void {
                if (isset($this->workers[$pid])) {
                    \posix_kill($pid, \SIGKILL);
                }
            });
        }
    }

    /** The request a stuck worker is held by, as far as the master can tell. */
    private function stuckIn(WorkerProcess $worker): ?string
    {
        // What the worker said from its signal handler is certain; else the request it started last,
        // else the oldest one it reported.
        $name = $worker->scoreboard?->reportedRunning() ?? $worker->scoreboard?->current();
        if ($name !== null) {
            return $name;
        }
        $running = $worker->stats['running'] ?? null;
        return \is_array($running) && \is_array($running[0] ?? null) && \is_string($running[0]['request'] ?? null) ? $running[0]['request'] : null;
    }

    private function writePidFile(): void
    {
        if ($this->config->pidFile === null) {
            return;
        }
        $this->pidFile = new PidFile($this->config->pidFile, $this->config->name);
        $this->pidFile->claim((int) \getmypid());
    }

    private function event(string $event): void
    {
        foreach ($this->config->masterHooks as $hook) {
            $hook->event($event);
        }
    }

    private function cleanup(): void
    {
        foreach ($this->config->masterHooks as $hook) {
            $hook->stop();
        }
        foreach ($this->signalWatchers as $id) {
            $this->driver->cancel($id);
        }
        $this->control?->remove();
        $this->listener->close();
        $this->pidFile?->release((int) \getmypid());
    }
}
