<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\Coroutine\Cancelled;
use Weft\Coroutine\Coroutine;
use Weft\Coroutine\Scheduler;
use Weft\Loop\Driver;
use Weft\Loop\Loop;
use Weft\Socket\ConnectionClosed;
use Weft\Socket\Listener;
use Weft\Socket\Socket;

use function Weft\go;

/**
 * One worker process: loads the application once, then accepts and serves connections until told to
 * stop (SIGTERM/SIGINT, --max-requests reached, or the master gone). Stopping is always graceful: stop
 * accepting, let in-flight work finish, end keep-alive connections at their next request boundary.
 *
 * @internal started by Master after fork
 */
final class Worker
{
    public const EXIT_OK = 0;
    public const EXIT_BOOT_FAILED = 3;
    private const SYNC_ACCEPT_PAUSE_STEP = 0.002;
    private const SYNC_ACCEPT_PAUSE_MAX = 0.05;

    private Driver $driver;
    private ConnectionHandler $handler;
    private Executor $executor;
    private ?Coroutine $acceptor = null;
    private ?Coroutine $masterWatch = null;
    private bool $draining = false;
    private int $connections = 0;
    private float $started;
    private bool $warnedUnwatchable = false;

    public function __construct(
        private readonly ServerConfig $config,
        private readonly Listener $listener,
        private readonly ?Socket $master,
        private readonly Logger $logger,
        private readonly int $slot,
    ) {
        $this->started = \microtime(true);
    }

    public function run(): int
    {
        $this->driver = Loop::reset($this->config->loop);
        Scheduler::get()->setMaxCoroutines($this->config->maxCoroutines);
        Scheduler::get()->setUncaughtHandler(function (\Throwable $e, Coroutine $coroutine): void {
            $this->logger->error('Unhandled exception in coroutine #{id}: {message}', [
                'id' => $coroutine->id, 'message' => $e->getMessage(), 'exception' => $e,
            ]);
        });
        $this->driver->setErrorHandler(function (\Throwable $e): void {
            $this->logger->error('Error in an event loop callback: {message}', ['message' => $e->getMessage(), 'exception' => $e]);
        });
        \mt_srand();
        if (\function_exists('cli_set_process_title')) {
            @\cli_set_process_title("{$this->config->name}: worker {$this->slot}");
        }

        $this->executor = $this->config->mode === 'sync' ? new SyncExecutor($this->driver) : new CoroutineExecutor();
        try {
            $this->handler = ($this->config->handlerFactory)($this->executor);
        } catch (\Throwable $e) {
            $this->logger->critical('Worker could not load the application: {message}', ['message' => $e->getMessage(), 'exception' => $e]);
            $this->send(['type' => 'boot-failed', 'error' => $e->getMessage()]);
            return self::EXIT_BOOT_FAILED;
        }
        if ($this->config->maxRequests > 0) {
            $this->executor->onCall(function (int $calls): void {
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

        // The master watch first: the acceptor may already serve queued requests (and reach
        // --max-requests, and drain) before it returns here.
        if ($this->master !== null) {
            $this->masterWatch = go($this->watchMaster(...));
        }
        $this->acceptor = go($this->acceptLoop(...));
        $this->send(['type' => 'ready'] + $this->stats());

        $finished = fn (): bool => $this->draining && $this->connections === 0;
        if ($this->executor instanceof SyncExecutor) {
            $this->executor->drive($finished);
        } else {
            // run() clears a stop() that came before it, so a drain that is already complete skips it.
            while (!$finished()) {
                $this->driver->run();
                if (!$this->draining) {
                    break;
                }
            }
        }
        $this->reportStats();
        return self::EXIT_OK;
    }

    private function acceptLoop(): void
    {
        while (!$this->draining) {
            try {
                $connection = $this->listener->accept();
            } catch (Cancelled|ConnectionClosed) {
                return;
            }
            if (!$this->driver->canWatch($connection->resource())) {
                if (!$this->warnedUnwatchable) {
                    $this->warnedUnwatchable = true;
                    $this->logger->warning(
                        'Refusing connections: the select loop cannot watch descriptors numbered 1024 or above '
                        . '(use --loop epoll); logged once',
                    );
                }
                $connection->close();
                continue;
            }
            if ($this->connections >= $this->config->maxConnections) {
                go(fn () => $this->handler->refuse($connection, 'too many connections'));
                continue;
            }
            $this->connections++;
            $this->serve($connection);
            if ($this->executor instanceof SyncExecutor) {
                $this->yieldAccepting();
            }
        }
    }

    /**
     * A sync worker serves its connections one request at a time, so a connection it takes waits behind
     * all the others it holds. Workers share one listening socket, and whichever runs first would take a
     * whole burst (seen: 3 of 8 workers holding all 100 connections of a load test, the rest idle). After
     * each accept, a sync worker therefore leaves the socket to its siblings for a moment that grows with
     * the connections it holds: an idle worker takes the next connection at once.
     */
    private function yieldAccepting(): void
    {
        $pause = \min(self::SYNC_ACCEPT_PAUSE_MAX, $this->connections * self::SYNC_ACCEPT_PAUSE_STEP);
        if ($pause > 0 && $this->config->workers > 1) {
            try {
                \Weft\sleep($pause);
            } catch (Cancelled) {
            }
        }
    }

    private function serve(Socket $connection): void
    {
        go(function () use ($connection): void {
            try {
                $this->handler->handle($connection);
            } catch (\Throwable $e) {
                $this->logger->error('Connection handler failed: {message}', ['message' => $e->getMessage(), 'exception' => $e]);
                $connection->close();
            } finally {
                $this->connections--;
                if ($this->draining && $this->connections === 0) {
                    $this->driver->stop();
                }
            }
        });
    }

    /** The master's end of our channel closes when it dies: then we stop too, rather than linger. */
    private function watchMaster(): void
    {
        try {
            while ($this->master->read() !== null) {
                // The master sends nothing yet; anything it does send is ignored.
            }
        } catch (Cancelled|ConnectionClosed) {
            return;
        }
        if (!$this->draining) {
            $this->logger->warning('The master process is gone: stopping');
            $this->drain();
        }
    }

    private function drain(): void
    {
        if ($this->draining) {
            return;
        }
        $this->draining = true;
        $this->acceptor?->cancel();
        $this->masterWatch?->cancel();
        $this->listener->detach();
        $this->handler->drain();
        $this->send(['type' => 'draining'] + $this->stats());
        // The grace period: connections still open then are cut; the master enforces it too.
        $this->driver->unreference($this->driver->delay($this->config->grace, function (): void {
            $this->logger->warning('Grace period over with {n} connection(s) still open: closing them', ['n' => $this->connections]);
            $this->connections = 0;
            $this->driver->stop();
            exit(self::EXIT_OK);
        }));
        if ($this->connections === 0) {
            $this->driver->stop();
        }
    }

    private function reportStats(): void
    {
        $this->send(['type' => 'stats'] + $this->stats());
    }

    /** @return array<string, mixed> */
    private function stats(): array
    {
        $stats = Stats::collect($this->handler, $this->started, $this->executor->mode(), $this->driver->name());
        $stats['slot'] = $this->slot;
        $stats['requests'] = \max($stats['requests'], $this->executor->calls());
        if ($this->config->workerStats !== null) {
            $stats += ($this->config->workerStats)();
        }
        return $stats;
    }

    /** @param array<string, mixed> $message */
    private function send(array $message): void
    {
        if ($this->master === null || $this->master->isClosed()) {
            return;
        }
        // One short line on a local socket pair: it fits the buffer, so a blocking write never waits long.
        $line = \json_encode($message, \JSON_THROW_ON_ERROR) . "\n";
        $written = @\fwrite($this->master->resource(), $line);
        if ($written === false) {
            \error_clear_last();
        }
    }
}
