<?php

declare(strict_types=1);

namespace Weft\Server;

use Psr\Log\LoggerInterface;
use Weft\Loop\Driver;
use Weft\Server\Internal\Deadlines;

/**
 * A worker's connections: the one table, ids, deadlines, refusal, drain and stats, whatever the
 * protocol. The protocol only decodes and dispatches (Protocol, Session).
 *
 * @internal used by Worker
 */
final class Connections
{
    /** @var array<int, Connection> */
    private array $open = [];
    private int $nextId = 1;
    private bool $draining = false;
    private bool $warnedUnwatchable = false;
    private readonly Timeouts $timeouts;
    /**
     * The connections' read, idle and send timers, one per connection (by its id). Reached through here
     * rather than held by each Connection: an idle one arms or disarms nothing, and every property less
     * keeps a Connection in a smaller allocation.
     *
     * @internal for Connection
     */
    public readonly Deadlines $deadlines;
    /** What all connections together may hold of unsent output. */
    public readonly OutputBudget $output;
    private ?\Closure $onEmpty = null;
    /**
     * Whether a connection keeps reading (the requests behind it, or its end) while one of its requests
     * is in the application. On epoll a watched idle socket costs nothing, and toggling it would cost two
     * epoll_ctl() calls per request; select pays for every watched stream on every wait, and most
     * connections of a busy worker are waiting for the application, so there they are not watched.
     */
    public readonly bool $readAhead;

    public function __construct(
        private readonly Protocol $protocol,
        private readonly Dispatcher $dispatcher,
        private readonly Driver $driver,
        private readonly LoggerInterface $logger,
        private readonly int $maxConnections,
        int $outputBudget = ServerConfig::DEFAULT_OUTPUT_BUDGET,
    ) {
        $this->timeouts = $protocol->timeouts();
        $this->deadlines = new Deadlines($driver);
        $this->output = new OutputBudget($outputBudget, $driver, $logger, fn (): array => $this->open);
        $this->readAhead = $driver->name() !== 'select';
    }

    /**
     * Takes an accepted socket: serves it, or refuses it when the worker cannot. @param resource $stream
     * (encrypted already when $tls is given)
     */
    public function add(mixed $stream, ?string $peer, ?\Weft\Socket\Tls\TlsSession $tls = null): void
    {
        \stream_set_blocking($stream, false);
        \stream_set_read_buffer($stream, 0);
        \stream_set_write_buffer($stream, 0);
        if (!$this->driver->canWatch($stream)) {
            if (!$this->warnedUnwatchable) {
                $this->warnedUnwatchable = true;
                $this->logger->warning(
                    'Refusing connections: the select loop cannot watch descriptors numbered 1024 or above '
                    . '(use --loop epoll); logged once',
                );
            }
            \fclose($stream);
            return;
        }
        if (\count($this->open) >= $this->maxConnections) {
            // A short answer into an empty socket buffer: it fits, so one write and close is enough.
            @\fwrite($stream, $this->protocol->refusal('too many connections'));
            \error_clear_last();
            \fclose($stream);
            return;
        }
        $id = $this->nextId++;
        $connection = new Connection($id, $stream, $peer === '' ? null : $peer, $this, $this->driver, $this->timeouts, $this->output, $this->dispatcher, $tls);
        $this->open[$id] = $connection;
        $connection->session = $this->protocol->open($connection);
        $connection->update();
    }

    /** @internal called by Connection::close() */
    public function remove(Connection $connection): void
    {
        unset($this->open[$connection->id]);
        if ($this->draining && $this->open === [] && $this->onEmpty !== null) {
            ($this->onEmpty)();
        }
    }

    /**
     * The worker drains (Worker::drain() defines the word): every connection answers what it has in
     * flight with "Connection: close"; idle ones get the protocol's short drain wait (a request may be
     * on its way) and are closed.
     *
     * @param \Closure(): void $onEmpty called once the last connection has closed
     */
    public function drain(\Closure $onEmpty): void
    {
        $this->draining = true;
        $this->onEmpty = $onEmpty;
        foreach ($this->open as $connection) {
            $connection->drain();
        }
        if ($this->open === []) {
            $onEmpty();
        }
    }

    public function isDraining(): bool
    {
        return $this->draining;
    }

    public function count(): int
    {
        return \count($this->open);
    }

    /** Closes every connection at once (the grace period is over). */
    public function closeAll(): void
    {
        foreach ($this->open as $connection) {
            $connection->close();
        }
    }
}
