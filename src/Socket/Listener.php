<?php

declare(strict_types=1);

namespace Weft\Socket;

use Weft\Coroutine\IoWaiter;
use Weft\Coroutine\Scheduler;

/**
 * A listening socket. accept() waits for a connection (suspending only the calling coroutine) and
 * returns it as a Socket. Safe to share across forked workers: a worker that loses the race for a
 * connection simply waits again.
 */
final class Listener
{
    private ?IoWaiter $waiter = null;
    private ?Scheduler $waiterScheduler = null;
    private bool $closed = false;
    private readonly string $address;

    /** @param resource $resource */
    private function __construct(private readonly mixed $resource, private readonly ListenOptions $options, private readonly bool $unix)
    {
        \stream_set_blocking($resource, false);
        $name = @\stream_socket_get_name($resource, false);
        $this->address = $unix ? (string) $name : (string) $name;
    }

    /**
     * Binds and listens on "host:port" (port 0 picks a free one), "[::1]:port" or "unix:///path".
     *
     * @throws ListenException naming the address and the errno (EADDRINUSE, EACCES, ...)
     */
    public static function listen(string $address, ?ListenOptions $options = null): self
    {
        $options ??= ListenOptions::defaults();
        $uri = Address::normalize($address);
        $unix = Address::isUnix($uri);
        $socketOptions = ['backlog' => $options->backlog];
        if (!$unix) {
            $socketOptions['so_reuseport'] = $options->reusePort;
            if (\str_contains($uri, '[')) {
                $socketOptions['ipv6_v6only'] = $options->ipv6Only;
            }
        } else {
            self::removeStaleUnixSocket(\substr($uri, 7));
        }
        $context = \stream_context_create(['socket' => $socketOptions]);
        $resource = @\stream_socket_server($uri, $errno, $error, \STREAM_SERVER_BIND | \STREAM_SERVER_LISTEN, $context);
        if ($resource === false) {
            throw ListenException::failed($address, $errno, $error);
        }
        return new self($resource, $options, $unix);
    }

    /**
     * Waits for the next connection.
     *
     * @throws \Weft\Coroutine\Timeout|ConnectionClosed (when the listener was closed)
     */
    public function accept(?float $timeout = null): Socket
    {
        while (true) {
            if ($this->closed) {
                throw ConnectionClosed::local('accept');
            }
            $client = $this->acceptStream($peer);
            if ($client !== null) {
                return new Socket($client, $peer === '' ? null : $peer);
            }
            $this->waiter()->readable($timeout);
        }
    }

    /**
     * Takes a pending connection as a bare stream, without waiting: for the server core, which drives
     * connections from loop callbacks rather than through Socket. @return resource|null
     */
    public function acceptStream(?string &$peer = null): mixed
    {
        $client = @\stream_socket_accept($this->resource, 0, $peer);
        if ($client === false) {
            \error_clear_last();
            return null;
        }
        if ($this->options->tcpNoDelay && !$this->unix) {
            self::setNoDelay($client);
        }
        return $client;
    }

    /**
     * Serves TLS on this listener: the connections accepted from now on are encrypted by
     * Socket::enableServerTls(), each in the coroutine that serves it, so that a client slow to
     * complete its handshake holds no other accept. (The server core does the same from the loop,
     * through Tls\TlsAcceptor.) Checks the certificates first.
     *
     * @throws Tls\TlsConfigError
     */
    public function useTls(Tls\TlsConfig $config): void
    {
        Tls\TlsAcceptor::prepare($config, $this->resource);
    }

    /** The bound address, e.g. "127.0.0.1:41234" or the socket path. */
    public function address(): string
    {
        return $this->address;
    }

    /** The bound port (0 for Unix sockets). */
    public function port(): int
    {
        if ($this->unix) {
            return 0;
        }
        return (int) \substr($this->address, (int) \strrpos($this->address, ':') + 1);
    }

    /** @return resource */
    public function resource(): mixed
    {
        return $this->resource;
    }

    public function close(): void
    {
        if ($this->closed) {
            return;
        }
        $this->closed = true;
        $this->waiter?->close();
        if (\is_resource($this->resource)) {
            \fclose($this->resource);
        }
    }

    public function isClosed(): bool
    {
        return $this->closed;
    }

    /** Stops waiting for connections in this process without closing the socket (shared after fork). */
    public function detach(): void
    {
        $this->waiter?->close();
        $this->waiter = null;
        $this->waiterScheduler = null;
    }

    private function waiter(): IoWaiter
    {
        // Built lazily, and again after fork: the listener outlives the loop it was first used with.
        $scheduler = Scheduler::get();
        if ($this->waiter === null || $this->waiterScheduler !== $scheduler) {
            $this->waiter = new IoWaiter($this->resource);
            $this->waiterScheduler = $scheduler;
        }
        return $this->waiter;
    }

    private static function setNoDelay(mixed $client): void
    {
        if (\function_exists('socket_import_stream')) {
            $socket = @\socket_import_stream($client);
            if ($socket !== false) {
                @\socket_set_option($socket, \SOL_TCP, \TCP_NODELAY, 1);
            }
        }
    }

    private static function removeStaleUnixSocket(string $path): void
    {
        if (!\file_exists($path)) {
            return;
        }
        // A socket file nobody listens on is left over from a crash: replace it. A live one is in use.
        $probe = @\stream_socket_client('unix://' . $path, $errno, $error, 1.0);
        if ($probe !== false) {
            \fclose($probe);
            throw ListenException::failed('unix://' . $path, 98, 'Address already in use');
        }
        @\unlink($path);
    }
}
