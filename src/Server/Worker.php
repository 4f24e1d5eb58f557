<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\Coroutine\Scheduler;
use Weft\Hook\WorkerHooks;
use Weft\Loop\Driver;
use Weft\Loop\Loop;
use Weft\Socket\Listener;
use Weft\Socket\Tls\TlsAcceptor;

/**
 * One worker process: loads the application once, then accepts and serves connections until told to
 * stop (SIGTERM/SIGINT, --max-requests reached, or the master gone). Stopping is always graceful: stop
 * accepting, let in-flight work finish, end keep-alive connections at their next request boundary.
 *
 * Everything here is a loop callback: accepting, the master's channel, every connection's I/O. A
 * coroutine runs only while a request is in the application (Dispatcher).
 *
 * @internal started by Master after fork
 */
final class Worker
{
    public const EXIT_OK = 0;
    public const EXIT_BOOT_FAILED = 3;
    private const SYNC_ACCEPT_PAUSE_STEP = 0.002;
    private const SYNC_ACCEPT_PAUSE_MAX = 0.05;
    /**
     * Connections taken per readable event of the listener before others get a turn: the whole accept
     * queue in practice (nginx's multi_accept). A loaded tick can take milliseconds: with a small batch a
     * burst of connects stays in the accept queue across many ticks, the queue fills, and the kernel
     * drops the handshakes that do not fit, which the clients retry only after a one-second SYN timeout.
     */
    private const ACCEPT_BATCH = 1024;

    private Driver $driver;
    private Dispatcher $dispatcher;
    private ?Connections $connections = null;
    /** With --tls-cert: where accepted connections go first, for their handshake. */
    private ?TlsAcceptor $tls = null;
    /** @var array<string, mixed> the "ssl" options this worker's listener serves with */
    private array $tlsOptions = [];
    /** @var list<array{Listener, Connections, string}> ServerConfig::$extraListeners: listener, its connections, accept watcher */
    private array $extras = [];
    private ?string $acceptWatcher = null;
    private ?WorkerChannel $channel = null;
    private bool $draining = false;
    private bool $finished = false;
    private float $started;

    /** @param resource|null $master this worker's end of its channel to the master */
    public function __construct(
        private readonly ServerConfig $config,
        private readonly Listener $listener,
        private readonly mixed $master,
        private readonly Logger $logger,
        private readonly int $slot,
        /** This worker's slot in memory shared with the master (null: none, --worker-timeout 0 or no shmop). */
        private readonly ?Scoreboard $scoreboard = null,
    ) {
        $this->started = \microtime(true);
    }

    /**
     * Right after the fork, before the application loads: the worker's own memory limit, what it does when
     * PHP ends it (FatalPolicy), its log reopened on SIGUSR1 (the master forwards the signal), and the
     * logger an application finds (Weft\logger()).
     */
    private function prepare(): void
    {
        InFlight::reset();
        if ($this->config->memoryLimit !== null) {
            \ini_set('memory_limit', $this->config->memoryLimit > 0 ? (string) $this->config->memoryLimit : '-1');
        }
        FatalPolicy::install($this->logger, $this->config->memoryLimit);
        $logger = $this->logger;
        $also = $this->config->reopenAlso;
        $this->driver->unreference($this->driver->onSignal(\SIGUSR1, static function () use ($logger, $also): void {
            $logger->reopen();
            $logger->info($also === null ? 'Log file reopened (SIGUSR1)' : 'Log file and ' . $also() . ' reopened (SIGUSR1)');
        }));
        ServerLog::install($logger);
    }

    public function run(): int
    {
        $this->driver = Loop::reset($this->config->loop);
        $this->prepare();
        WorkerHooks::install($this->config->hooks);
        Scheduler::get()->setMaxCoroutines($this->config->maxCoroutines);
        Scheduler::get()->setUncaughtHandler(function (\Throwable $e, int $id): void {
            $this->logger->error('Unhandled exception in coroutine #{id}: {message}', [
                'id' => $id, 'message' => $e->getMessage(), 'exception' => $e,
            ]);
        });
        $this->driver->setErrorHandler(function (\Throwable $e): void {
            $this->logger->error('Error in an event loop callback: {message}', ['message' => $e->getMessage(), 'exception' => $e]);
        });
        \mt_srand();
        if (\function_exists('cli_set_process_title')) {
            @\cli_set_process_title("{$this->config->name}: worker {$this->slot}");
        }

        if ($this->master !== null) {
            $this->channel = new WorkerChannel($this->master, $this->driver);
        }
        $sync = $this->config->mode === 'sync';
        $this->dispatcher = new Dispatcher($this->driver, $this->logger, $sync ? 1 : 0, $this->config->maxRequestTime, $this->scoreboard);
        // What the application prints outside a response (an echo while it boots, a dump() in a
        // terminate listener, a warning shown on stdout) reaches the worker's stdout without marking
        // the headers as sent (StdoutGuard): header(), setcookie() and session_start() would fail in
        // every later request.
        StdoutGuard::install();
        if (\headers_sent($file, $line)) {
            // Inherited from the master: something printed there before this worker was forked.
            $this->logger->warning('Output at {file}:{line} marked the headers as sent before this worker started: header(), setcookie() and session_start() fail in its requests', [
                'file' => $file, 'line' => $line,
            ]);
        }
        try {
            $protocol = ($this->config->handlerFactory)();
            if ($this->config->tls !== null) {
                // Read from disk here, in each new worker: a reload serves renewed certificates, and a
                // key that does not match fails the reload (this boot) while the old generation serves on.
                $this->tlsOptions = TlsAcceptor::prepare($this->config->tls, $this->listener->resource());
            }
        } catch (\Throwable $e) {
            $this->logger->critical('Worker could not load the application: {message}', ['message' => $e->getMessage(), 'exception' => $e]);
            // With where: this line is all a `serve --daemon` or a `reload` prints of the failure.
            $this->channel?->send(WorkerMessage::bootFailed(ExceptionTrace::summary($e)));
            $this->channel?->flushNow();
            return self::EXIT_BOOT_FAILED;
        }
        if ($this->config->mode === 'coroutine') {
            WorkerHooks::startDetector($this->config->blockingThreshold, $this->logger, $this->dispatcher->currentRequest(...));
        }
        InFlight::from($this->dispatcher->running(...));
        InFlight::onFatal($this->dispatcher->abandonAll(...), $this->dispatcher->currentRequest(...));
        $this->answerWhenStuck();
        $this->connections = new Connections($protocol, $this->dispatcher, $this->driver, $this->logger, $this->config->maxConnections, $this->config->outputBudget);
        if ($this->config->tls !== null) {
            $connections = $this->connections;
            $this->tls = new TlsAcceptor(
                $this->config->tls,
                $this->tlsOptions,
                $this->driver,
                $this->logger,
                $connections->add(...),
                function () use ($connections): void {
                    // A drain waits for handshakes under way too: each ends as a connection, or not at all.
                    if ($this->draining && $connections->count() === 0) {
                        $this->drained();
                    }
                },
                $this->config->maxConnections,
            );
        }
        if ($this->config->maxRequests > 0) {
            $this->dispatcher->onCall(function (int $calls): void {
                if ($calls >= $this->config->maxRequests && !$this->draining) {
                    $this->logger->info('Served {n} requests (--max-requests): recycling', ['n' => $calls]);
                    $this->drain();
                }
            });
        }

        foreach ([\SIGTERM, \SIGINT] as $signal) {
            $this->driver->unreference($this->driver->onSignal($signal, fn () => $this->drain()));
        }
        $this->driver->unreference($this->driver->repeat(1.0, fn () => $this->reportStats()));
        $this->channel?->listen(
            function (WorkerMessage $message): void {
                $this->logger->warning('The master sent a {type} message, which a worker does not take: ignored', ['type' => $message->type]);
            },
            function (MalformedMessage $e): void {
                $this->logger->warning('The master sent what is not a message ({reason}): no longer reading its channel', ['reason' => $e->getMessage()]);
            },
            function (): void {
                if (!$this->draining) {
                    $this->logger->warning('The master process is gone: stopping');
                    $this->drain();
                }
            },
        );
        $this->acceptWatcher = $this->driver->onReadable($this->listener->resource(), $this->accept(...));
        foreach ($this->config->extraListeners as $extra) {
            $listener = $extra->listener();
            $connections = new Connections($extra->protocol($this->listener->port()), $this->dispatcher, $this->driver, $this->logger, $this->config->maxConnections, $this->config->outputBudget);
            $watcher = $this->driver->onReadable($listener->resource(), function () use ($listener, $connections): void {
                for ($i = 0; $i < self::ACCEPT_BATCH && !$this->draining; $i++) {
                    $stream = $listener->acceptStream($peer);
                    if ($stream === null) {
                        return;
                    }
                    $connections->add($stream, $peer);
                }
            });
            $this->extras[] = [$listener, $connections, $watcher];
        }
        $this->channel?->send(WorkerMessage::ready($this->stats()));

        // run() clears a stop() that came before it, so a drain that is already complete skips it.
        while (!$this->finished) {
            $this->driver->run();
            if (!$this->draining) {
                break;
            }
        }
        $this->reportStats();
        $this->channel?->flushNow();
        return self::EXIT_OK;
    }

    private function accept(): void
    {
        for ($i = 0; $i < self::ACCEPT_BATCH && !$this->draining; $i++) {
            $stream = $this->listener->acceptStream($peer);
            if ($stream === null) {
                return; // another worker took it, or the backlog is empty
            }
            if ($this->tls !== null) {
                $this->tls->start($stream, $peer);
            } else {
                $this->connections->add($stream, $peer);
            }
            if ($this->config->mode === 'sync' && $this->config->workers > 1) {
                $this->yieldAccepting();
                return;
            }
        }
    }

    /**
     * A sync worker runs one request at a time, so a connection it takes waits behind all the others it
     * holds. Workers share one listening socket, and whichever runs first would take a whole burst,
     * leaving its siblings idle while its connections queue. After each accept, a sync worker therefore
     * leaves the socket to its siblings for a moment that grows with the connections it holds: an idle
     * worker takes the next connection at once.
     */
    private function yieldAccepting(): void
    {
        $pause = \min(self::SYNC_ACCEPT_PAUSE_MAX, $this->connections->count() * self::SYNC_ACCEPT_PAUSE_STEP);
        if ($pause <= 0 || $this->acceptWatcher === null) {
            return;
        }
        $this->driver->disable($this->acceptWatcher);
        // Referenced: while accepting is paused, this timer may be all that keeps the loop running (the
        // connection just taken can be answered and closed within the pause), and a loop with nothing
        // referenced ends, which ends the worker.
        $this->driver->delay($pause, function (): void {
            if (!$this->draining && $this->acceptWatcher !== null) {
                $this->driver->enable($this->acceptWatcher);
            }
        });
    }

    /**
     * Drain, the one meaning of the word in Weft: stop accepting, let every request in flight finish
     * (each answered with "Connection: close"), close each keep-alive connection at its next request
     * boundary (an idle one after its protocol's short wait), then exit; what is still open after
     * --grace is cut. Stop, reload (the old generation), --max-requests and a vanished master all
     * drain a worker; `status` and /metrics show it as "draining".
     */
    private function drain(): void
    {
        if ($this->draining) {
            return;
        }
        $this->draining = true;
        if ($this->acceptWatcher !== null) {
            $this->driver->cancel($this->acceptWatcher);
            $this->acceptWatcher = null;
        }
        $this->listener->detach();
        foreach ($this->extras as [$listener, $connections, $watcher]) {
            $this->driver->cancel($watcher);
            $listener->detach();
            $connections->closeAll();
        }
        $this->channel?->send(WorkerMessage::draining($this->stats()));
        // The grace period: connections still open then are cut; the master enforces it too.
        $this->driver->unreference($this->driver->delay($this->config->grace, function (): void {
            $this->logger->warning('Grace period over with {n} connection(s) still open: closing them', ['n' => $this->connections->count()]);
            $this->connections->closeAll();
            $this->tls?->closeAll();
            $this->finished = true;
            $this->driver->stop();
            $this->channel?->flushNow();
            exit(self::EXIT_OK);
        }));
        $this->connections->drain($this->drained(...));
    }

    /** The last connection of a draining worker has closed: done, unless a TLS handshake is still under way. */
    private function drained(): void
    {
        if ($this->finished || ($this->tls !== null && $this->tls->pending() > 0)) {
            return;
        }
        $this->finished = true;
        $this->driver->stop();
    }

    /**
     * The master's signals to a worker that stopped reporting. SIGWINCH: say which request's code holds
     * the worker, for `status`. SIGXCPU, once --worker-timeout is over: answer every request in flight
     * (the one that holds the worker a 500, the others a 503 with "Connection: close") and exit at once,
     * rather than leave them all empty replies when the master kills the worker.
     *
     * Asynchronous signals, so that the handler runs at the next opcode boundary of whatever code holds
     * the worker (an endless loop never gives the loop a turn); the loop's own signal watchers only queue
     * a signal and are not affected. A long C call (a regular expression, a hash) does not reach an
     * opcode boundary: there the extension, when loaded, answers with the 503s each request left with it
     * (CodeDeadline::track()); without it the master's SIGKILL comes first.
     */
    private function answerWhenStuck(): void
    {
        $scoreboard = $this->scoreboard;
        if ($scoreboard === null || !\function_exists('pcntl_async_signals') || !\function_exists('posix_kill')) {
            return;
        }
        \pcntl_async_signals(true);
        \pcntl_signal(\SIGWINCH, static function () use ($scoreboard): void {
            $scoreboard->running(InFlight::current() ?? '');
        });
        \pcntl_signal(\SIGXCPU, function (): void {
            if (!CodeDeadline::claimLastWords()) {
                return; // the extension's thread answered them and ends the process
            }
            $culprit = InFlight::current();
            $answered = InFlight::abandon();
            $this->logger->error('Stuck in {request} over --worker-timeout: {others} other request(s) in flight answered 503; the worker exits and is replaced', [
                'request' => $culprit ?? 'no request', 'others' => \max(0, $answered - ($culprit !== null ? 1 : 0)),
            ]);
            // Nothing of this process is worth running any more: not the request's code, not its
            // finally blocks, not the shutdown functions.
            \posix_kill(\getmypid(), \SIGKILL);
        });
        CodeDeadline::lastWords(\SIGXCPU);
    }

    private function reportStats(): void
    {
        Scheduler::get()->trimIdle();
        $this->channel?->send(WorkerMessage::stats($this->stats()));
    }

    /** @return array<string, mixed> */
    private function stats(): array
    {
        $stats = Stats::collect($this->connections?->count() ?? 0, $this->dispatcher->calls(), $this->started, $this->dispatcher->mode(), $this->driver->name());
        $stats['slot'] = $this->slot;
        if ($this->tls !== null) {
            $stats += $this->tls->stats();
        }
        if ($this->config->workerStats !== null) {
            $stats += ($this->config->workerStats)();
        }
        return $stats;
    }
}
