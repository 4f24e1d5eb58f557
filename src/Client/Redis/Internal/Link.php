<?php

declare(strict_types=1);

namespace Weft\Client\Redis\Internal;

use Weft\Client\Redis\Config;
use Weft\Client\Redis\ConnectionLost;
use Weft\Client\Redis\Protocol\ProtocolError;
use Weft\Client\Redis\Protocol\Push;
use Weft\Client\Redis\Protocol\RespReader;
use Weft\Client\Redis\Protocol\RespWriter;
use Weft\Client\Redis\RedisError;
use Weft\Coroutine\IoWaiter;
use Weft\Coroutine\Timeout;
use Weft\TimeoutException;
use Weft\Socket\ConnectException;
use Weft\Socket\ConnectOptions;
use Weft\Socket\ConnectTimeout;
use Weft\Socket\Socket;
use Weft\Socket\SocketException;

/**
 * One open Redis stream: writes bytes, reads decoded frames, and closes itself whenever the stream can no
 * longer be trusted (so a caller never reads someone else's reply). Shared by Connection and Subscriber.
 *
 * @internal
 */
final class Link
{
    private const READ_CHUNK = 65536;

    private readonly RespReader $reader;
    /** @var resource */
    private readonly mixed $resource;
    private bool $closed = false;
    /**
     * Right after a write the reply cannot be there yet: wait for readability first instead of paying
     * for a read that would fail with EAGAIN. (A watcher of its own on the socket's stream; the driver
     * supports several per stream.)
     */
    private ?IoWaiter $readable = null;
    private bool $justSent = false;
    /** @var array<array-key, mixed> the HELLO reply (RESP3) */
    private array $hello = [];

    private function __construct(private readonly Socket $socket, public readonly Config $config)
    {
        $this->reader = new RespReader();
        $this->resource = $socket->resource();
    }

    private static function connectFailed(Config $config, \Throwable $e): ConnectException
    {
        $what = 'Redis at ' . $config->describe();
        return $e instanceof TimeoutException ? ConnectTimeout::because($what, $e) : ConnectException::because($what, $e);
    }

    /**
     * Connects and runs the handshake (HELLO 3 / AUTH / SELECT) in one round trip.
     *
     * @throws ConnectException when the server cannot be reached (ConnectTimeout: not in time)
     * @throws RedisError when the server refuses the handshake (WRONGPASS, NOPROTO, ...)
     */
    public static function open(Config $config): self
    {
        try {
            $socket = Socket::connect(
                $config->address(),
                ConnectOptions::defaults()->withConnectTimeout($config->connectTimeout),
            );
            if ($config->tls) {
                $socket->enableClientTls($config->host, [], $config->connectTimeout);
            }
        } catch (SocketException | Timeout $e) {
            throw self::connectFailed($config, $e);
        }
        $link = new self($socket, $config);

        $commands = [];
        if ($config->protocol === 3) {
            $hello = ['HELLO', '3'];
            if ($config->password !== null) {
                \array_push($hello, 'AUTH', $config->username ?? 'default', $config->password);
            }
            $commands[] = $hello;
        } elseif ($config->password !== null) {
            $commands[] = $config->username === null
                ? ['AUTH', $config->password]
                : ['AUTH', $config->username, $config->password];
        }
        if ($config->database !== 0) {
            $commands[] = ['SELECT', $config->database];
        }
        if ($commands === []) {
            return $link;
        }

        try {
            $link->send(RespWriter::commands($commands), true);
            $error = null;
            foreach ($commands as $i => $command) {
                $reply = $link->receive($config->timeout ?? $config->connectTimeout);
                if ($reply instanceof RedisError) {
                    $error ??= $reply;
                } elseif ($command[0] === 'HELLO' && \is_array($reply)) {
                    $link->hello = $reply;
                }
            }
        } catch (ConnectionLost | Timeout $e) {
            $link->close();
            throw self::connectFailed($config, $e);
        } catch (\Throwable $e) {
            $link->close();
            throw $e;
        }
        if ($error !== null) {
            $link->close();
            throw $error;
        }
        return $link;
    }

    /** @return array<array-key, mixed> */
    public function hello(): array
    {
        return $this->hello;
    }

    /**
     * Writes $bytes in one write. First makes sure the server has not closed the connection meanwhile
     * (one non-blocking peek): a connection found dead before sending fails as safe to retry.
     *
     * @param bool $safe whether a failed write is harmless (a lone command or a whole MULTI..EXEC: a
     *                   partially received command is never run) and no WATCH state is lost
     */
    public function send(string $bytes, bool $safe): void
    {
        if ($this->closed) {
            throw ConnectionLost::closed($this->config->describe());
        }
        if (!$this->config->tls && @\stream_socket_recvfrom($this->resource, 1, \STREAM_PEEK) === '') {
            $this->close();
            throw ConnectionLost::beforeSending($this->config->describe(), !$safe);
        }
        try {
            $this->socket->write($bytes, $this->config->timeout);
            $this->justSent = true;
        } catch (SocketException $e) {
            $this->close();
            throw ConnectionLost::whileSending($this->config->describe(), $e, $safe);
        } catch (\Throwable $e) {
            // A timeout or a cancel halfway through a write leaves a partial command on the stream.
            $this->close();
            throw $e;
        }
    }

    /**
     * Reads the next frame. RESP3 pushes are returned only when $pushes is true; otherwise they are
     * collected into $pushed and the next reply is returned.
     *
     * @param null|float $timeout for the whole frame; null waits as long as it takes
     * @param bool $interruptible true: a timeout or cancel leaves the link open (the reader keeps what it
     *        has, so the frame can be read later); false: the link is closed, the reply being lost
     * @param list<Push> $pushed
     * @throws ConnectionLost|Timeout|RedisError never thrown for error replies: those are returned
     */
    public function receive(?float $timeout, bool $pushes = false, bool $interruptible = false, array &$pushed = []): mixed
    {
        $deadline = null;
        while (true) {
            try {
                if ($this->reader->next($frame)) {
                    if ($frame instanceof Push && !$pushes) {
                        $pushed[] = $frame;
                        continue;
                    }
                    return $frame;
                }
            } catch (ProtocolError $e) {
                $this->close();
                throw $e;
            }
            if ($this->closed) {
                throw ConnectionLost::closed($this->config->describe());
            }
            try {
                if ($timeout === null) {
                    if ($this->justSent) {
                        $this->justSent = false;
                        ($this->readable ??= new IoWaiter($this->resource))->readable();
                    }
                    $data = $this->socket->read(self::READ_CHUNK);
                } else {
                    $deadline ??= \hrtime(true) / 1e9 + $timeout;
                    $left = $deadline - \hrtime(true) / 1e9;
                    if ($left <= 0) {
                        throw Timeout::after($timeout, 'Redis reply');
                    }
                    if ($this->justSent) {
                        $this->justSent = false;
                        ($this->readable ??= new IoWaiter($this->resource))->readable($left);
                        $left = \max(0.000001, $deadline - \hrtime(true) / 1e9);
                    }
                    $data = $this->socket->read(self::READ_CHUNK, $left);
                }
            } catch (SocketException $e) {
                $this->close();
                throw ConnectionLost::whileReading($this->config->describe(), $e);
            } catch (\Throwable $e) {
                if (!$interruptible || $this->closed) {
                    $this->close();
                }
                throw $e;
            }
            if ($data === null) {
                $this->close();
                throw ConnectionLost::whileReading($this->config->describe());
            }
            $this->reader->feed($data);
        }
    }

    /** @return array<array-key, mixed> */
    public function takeAttributes(): array
    {
        return $this->reader->takeAttributes();
    }

    public function isClosed(): bool
    {
        return $this->closed;
    }

    /** A connection dropped without close() must not leave its descriptor and watchers behind. */
    public function __destruct()
    {
        $this->close();
    }

    public function close(): void
    {
        if ($this->closed) {
            return;
        }
        $this->closed = true;
        $this->justSent = false;
        $this->reader->reset();
        $this->readable?->close();
        $this->socket->close();
    }
}
