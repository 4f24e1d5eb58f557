<?php

declare(strict_types=1);

namespace Weft\Line;

use Psr\Log\LoggerInterface;
use Weft\Loop\Loop;
use Weft\Server\ConnectionHandler;
use Weft\Server\Executor;
use Weft\Server\IdleSweeper;
use Weft\Socket\ConnectionClosed;
use Weft\Socket\Socket;
use Weft\Socket\SocketException;

/**
 * Serves the line protocol: each line goes to the application, `fn (string $line, Connection $c): ?string`,
 * and a non-null result goes back as a line. Lines that arrive together are answered with one write.
 */
final class LineConnectionHandler implements ConnectionHandler
{
    public const DEFAULT_IDLE_TIMEOUT = 300.0;

    /** @var array<int, Socket> open connections by id */
    private array $connections = [];
    /** @var array<int, true> connections waiting for their next line */
    private array $idle = [];
    private int $nextId = 1;
    private int $lines = 0;
    private bool $draining = false;
    private readonly LineCodec $codec;
    private readonly IdleSweeper $sweeper;

    /** @param \Closure(string, Connection): ?string $application */
    public function __construct(
        private readonly \Closure $application,
        private readonly Executor $executor,
        private readonly LoggerInterface $logger,
        int $maxLineLength = LineCodec::DEFAULT_MAX_LINE,
        private readonly float $idleTimeout = self::DEFAULT_IDLE_TIMEOUT,
    ) {
        $this->codec = new LineCodec($maxLineLength);
        $this->sweeper = new IdleSweeper(Loop::get());
    }

    public function handle(Socket $socket): void
    {
        $id = $this->nextId++;
        $this->connections[$id] = $socket;
        $buffer = '';
        $connection = null;
        try {
            while (!$this->draining || $buffer !== '') {
                $this->idle[$id] = true;
                if ($this->idleTimeout > 0) {
                    $this->sweeper->arm($id, $this->idleTimeout, static fn () => $socket->close());
                }
                $data = $socket->read();
                unset($this->idle[$id]);
                if ($data === null) {
                    break;
                }
                $buffer .= $data;
                try {
                    $lines = $this->codec->decode($buffer);
                } catch (LineTooLongError $e) {
                    $socket->write('ERROR ' . $e->getMessage() . "\r\n");
                    break;
                }
                $out = '';
                foreach ($lines as [$line, $ending]) {
                    $connection ??= new Connection($id, $socket, $ending);
                    $reply = $this->reply($line, $connection);
                    if ($reply !== null) {
                        $out .= $reply . $ending;
                    }
                    if ($connection->isCloseRequested()) {
                        break;
                    }
                }
                if ($out !== '') {
                    $socket->write($out);
                }
                if ($connection?->isCloseRequested()) {
                    break;
                }
            }
        } catch (ConnectionClosed|SocketException) {
            // The peer left, or we closed an idle connection: nothing more to say.
        } finally {
            $this->sweeper->disarm($id);
            unset($this->connections[$id], $this->idle[$id]);
            $socket->close();
        }
    }

    public function refuse(Socket $connection, string $reason): void
    {
        try {
            $connection->write("ERROR $reason\r\n", 1.0);
        } catch (\Throwable) {
        }
        $connection->close();
    }

    public function drain(): void
    {
        $this->draining = true;
        foreach ($this->idle as $id => $_) {
            $this->connections[$id]->close();
        }
    }

    public function stats(): array
    {
        return ['connections' => \count($this->connections), 'requests' => $this->lines];
    }

    private function reply(string $line, Connection $connection): ?string
    {
        $this->lines++;
        try {
            $reply = $this->executor->call($this->application, $line, $connection);
        } catch (\Throwable $e) {
            $this->logger->error('Line handler failed: {message}', ['message' => $e->getMessage(), 'exception' => $e]);
            return 'ERROR internal server error';
        }
        if ($reply !== null && !\is_string($reply)) {
            $this->logger->error('Line handler returned {type}; expected a string or null', ['type' => \get_debug_type($reply)]);
            return 'ERROR internal server error';
        }
        return $reply;
    }
}
