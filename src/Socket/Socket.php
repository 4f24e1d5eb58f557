<?php

declare(strict_types=1);

namespace Weft\Socket;

use Weft\Coroutine\IoWaiter;

/**
 * A non-blocking stream socket used in coroutine style. Every call that has to wait suspends only the
 * calling coroutine; outside of any coroutine it runs the loop until the socket is ready. One coroutine may read
 * while another writes; two readers (or two writers) at once is a ConcurrentUse error.
 *
 * Reads are buffered inside the socket so that read(), readLine() and readExactly() can be mixed.
 */
final class Socket
{
    private const READ_CHUNK = 65536;
    private const WRITE_SLICE = 1 << 18;

    private string $buffer = '';
    private ?IoWaiter $waiter = null;
    private bool $closed = false;
    private bool $eof = false;
    /**
     * The last read took less than it asked for, so the kernel's buffer is most likely empty: wait for
     * readability before the next read instead of spending a system call on EAGAIN. In a
     * request/response exchange the next request is never there the moment the response is out.
     */
    private bool $likelyEmpty = false;
    private ?string $remote = null;
    /** The splitter of the last readLine() limit (a caller keeps to one). */
    private ?LineSplitter $lines = null;

    /** @param resource $resource */
    public function __construct(private readonly mixed $resource, ?string $remoteAddress = null)
    {
        \stream_set_blocking($resource, false);
        \stream_set_read_buffer($resource, 0);
        \stream_set_write_buffer($resource, 0);
        $this->remote = $remoteAddress;
    }

    /**
     * Opens a connection to "host:port", "[ipv6]:port", "tcp://..." or "unix:///path".
     *
     * @throws ConnectTimeout|ConnectException
     */
    public static function connect(string $address, ?ConnectOptions $options = null): self
    {
        $options ??= ConnectOptions::defaults();
        $uri = Address::normalize($address);
        $context = \stream_context_create(Address::isUnix($uri) ? [] : ['socket' => ['tcp_nodelay' => $options->tcpNoDelay]]);
        $timeout = $options->connectTimeout;

        $resource = @\stream_socket_client($uri, $errno, $error, $timeout, \STREAM_CLIENT_CONNECT | \STREAM_CLIENT_ASYNC_CONNECT, $context);
        if ($resource === false) {
            throw ConnectException::failed($address, $errno, $error);
        }
        $socket = new self($resource);
        try {
            $socket->waiter()->writable($timeout);
        } catch (\Weft\Coroutine\Timeout $e) {
            $socket->close();
            // Only our own connect deadline becomes ConnectTimeout; an enclosing Weft\timeout() keeps its own.
            if ($e->token !== null) {
                throw $e;
            }
            throw ConnectTimeout::after($address, $timeout);
        } catch (\Throwable $e) {
            $socket->close();
            throw $e;
        }
        $errno = self::pendingError($resource);
        if ($errno !== 0 || @\stream_socket_get_name($resource, true) === false) {
            $socket->close();
            throw ConnectException::failed($address, $errno ?: 111, '');
        }
        return $socket;
    }

    /** Two connected sockets (a Unix socket pair): for tests and in-process plumbing. @return array{self, self} */
    public static function pair(): array
    {
        $pair = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        if ($pair === false) {
            throw new SocketException('stream_socket_pair() failed');
        }
        return [new self($pair[0]), new self($pair[1])];
    }

    /**
     * Returns what is available, at most $max bytes, waiting for at least one byte; null at end of stream.
     *
     * @throws ConnectionClosed|\Weft\Coroutine\Timeout
     */
    public function read(int $max = self::READ_CHUNK, ?float $timeout = null): ?string
    {
        if ($this->buffer !== '') {
            if (\strlen($this->buffer) <= $max) {
                $data = $this->buffer;
                $this->buffer = '';
                return $data;
            }
            $data = \substr($this->buffer, 0, $max);
            $this->buffer = \substr($this->buffer, $max);
            return $data;
        }
        return $this->fill($max, $timeout) ? $this->take($max) : null;
    }

    /**
     * Returns the next line without its "\n" or "\r\n"; at end of stream, the unterminated rest (if any),
     * then null. Lines are cut by the one LineSplitter, as everywhere in Weft.
     *
     * @throws LineTooLong when the line exceeds $max bytes, its ending not counted (the bytes stay buffered)
     */
    public function readLine(int $max = LineSplitter::DEFAULT_MAX_LENGTH, ?float $timeout = null): ?string
    {
        $splitter = $this->lines?->maxLength === $max ? $this->lines : $this->lines = new LineSplitter($max);
        $searched = 0;
        while (($line = $splitter->take($this->buffer, $searched)) === null) {
            $searched = \strlen($this->buffer);
            if (!$this->fill(self::READ_CHUNK, $timeout)) {
                if ($this->buffer === '') {
                    return null;
                }
                $line = $this->buffer;
                $this->buffer = '';
                return $line;
            }
        }
        return $line;
    }

    /**
     * Returns exactly $length bytes.
     *
     * @throws ConnectionClosed when the stream ends first
     */
    public function readExactly(int $length, ?float $timeout = null): string
    {
        while (\strlen($this->buffer) < $length) {
            if (!$this->fill(\max(self::READ_CHUNK, $length - \strlen($this->buffer)), $timeout)) {
                throw ConnectionClosed::byPeer(\sprintf('reading %d bytes (%d received)', $length, \strlen($this->buffer)));
            }
        }
        return $this->take($length);
    }

    /**
     * Writes all of $data, waiting while the kernel's send buffer is full (backpressure).
     *
     * @throws ConnectionClosed|\Weft\Coroutine\Timeout
     */
    public function write(string $data, ?float $timeout = null): void
    {
        if ($this->closed) {
            throw ConnectionClosed::local('write');
        }
        $deadline = $timeout === null ? null : \hrtime(true) / 1e9 + $timeout;
        $length = \strlen($data);
        $offset = 0;
        while (true) {
            // A big write goes in slices: cutting what is left off the front after every partial write
            // would copy the rest each time (16 MiB through a socket pair: seconds of copying).
            $slice = $offset === 0 && $length <= self::WRITE_SLICE ? $data : \substr($data, $offset, self::WRITE_SLICE);
            $written = @\fwrite($this->resource, $slice);
            if ($written === false) {
                $error = \error_get_last();
                \error_clear_last();
                [$errno, $message] = Errno::fromWarning($error['message'] ?? null);
                if ($errno !== 11) {
                    throw ConnectionClosed::broken('writing', Errno::describe($errno, $message));
                }
                $written = 0;
            }
            $offset += $written;
            if ($offset === $length) {
                return;
            }
            if ($written === \strlen($slice)) {
                continue; // the whole slice went: the kernel may take more at once
            }
            $left = $deadline === null ? null : $deadline - \hrtime(true) / 1e9;
            if ($left !== null && $left <= 0) {
                throw \Weft\Coroutine\Timeout::after((float) $timeout, 'Write');
            }
            $this->waiter()->writable($left);
            if ($this->closed) {
                throw ConnectionClosed::local('write');
            }
        }
    }

    /** Upgrades to TLS as a client. @param array<string, mixed> $ssl stream context "ssl" options */
    public function enableClientTls(?string $peerName = null, array $ssl = [], ?float $timeout = 10.0): void
    {
        if ($peerName !== null) {
            $ssl += ['peer_name' => $peerName];
        }
        foreach ($ssl as $key => $value) {
            \stream_context_set_option($this->resource, 'ssl', $key, $value);
        }
        $deadline = $timeout === null ? null : \hrtime(true) / 1e9 + $timeout;
        while (true) {
            \error_clear_last();
            $result = @\stream_socket_enable_crypto($this->resource, true, \STREAM_CRYPTO_METHOD_TLS_CLIENT);
            if ($result === true) {
                return;
            }
            if ($result === false) {
                $error = \error_get_last();
                throw new TlsException('TLS handshake failed: ' . ($error['message'] ?? 'unknown error'));
            }
            $left = $deadline === null ? null : $deadline - \hrtime(true) / 1e9;
            if ($left !== null && $left <= 0) {
                throw new TlsException('TLS handshake timed out');
            }
            $this->waiter()->readable($left);
        }
    }

    /**
     * The server side of the TLS handshake, on a connection accepted from a listener that serves TLS
     * (Listener::useTls()). Suspends only this coroutine while the client is slow.
     *
     * @throws TlsException when the handshake fails or does not complete within $timeout
     */
    public function enableServerTls(?float $timeout = Tls\TlsConfig::DEFAULT_HANDSHAKE_TIMEOUT): Tls\TlsSession
    {
        $deadline = $timeout === null ? null : \hrtime(true) / 1e9 + $timeout;
        while (true) {
            \error_clear_last();
            $result = @\stream_socket_enable_crypto($this->resource, true, Tls\TlsConfig::METHOD);
            if ($result === true) {
                return Tls\TlsSession::of($this->resource);
            }
            if ($result === false) {
                $error = \error_get_last();
                \error_clear_last();
                throw new TlsException('TLS handshake failed: ' . ($error['message'] ?? 'unknown error'));
            }
            $left = $deadline === null ? null : $deadline - \hrtime(true) / 1e9;
            if ($left !== null && $left <= 0) {
                throw new TlsException('TLS handshake timed out');
            }
            try {
                $this->waiter()->readable($left);
            } catch (\Weft\Coroutine\Timeout) {
                throw new TlsException('TLS handshake timed out');
            }
        }
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

    /** Whether the peer has closed its side (known after a read saw the end of the stream). */
    public function isEof(): bool
    {
        return $this->eof && $this->buffer === '';
    }

    /** Bytes received but not yet returned by a read call. */
    public function buffered(): int
    {
        return \strlen($this->buffer);
    }

    public function localAddress(): ?string
    {
        return $this->closed ? null : (@\stream_socket_get_name($this->resource, false) ?: null);
    }

    public function remoteAddress(): ?string
    {
        return $this->remote ??= $this->closed ? null : (@\stream_socket_get_name($this->resource, true) ?: null);
    }

    /** @return resource */
    public function resource(): mixed
    {
        return $this->resource;
    }

    /** Reads what is available into the buffer, waiting for at least one byte. False at end of stream. */
    private function fill(int $max, ?float $timeout): bool
    {
        if ($this->closed) {
            throw ConnectionClosed::local('read');
        }
        if ($this->eof) {
            return false;
        }
        $deadline = null;
        $wait = $this->likelyEmpty;
        while (true) {
            if (!$wait) {
                $data = @\fread($this->resource, $max);
                if ($data !== false && $data !== '') {
                    $this->buffer .= $data;
                    $this->likelyEmpty = \strlen($data) < $max;
                    return true;
                }
                if ($data === false || \feof($this->resource)) {
                    $this->eof = true;
                    return false;
                }
            }
            $wait = false;
            if ($timeout !== null) {
                $deadline ??= \hrtime(true) / 1e9 + $timeout;
                $left = $deadline - \hrtime(true) / 1e9;
                if ($left <= 0) {
                    throw \Weft\Coroutine\Timeout::after($timeout, 'Read');
                }
                $this->waiter()->readable($left);
            } else {
                $this->waiter()->readable();
            }
            if ($this->closed) {
                throw ConnectionClosed::local('read');
            }
        }
    }

    private function take(int $length): string
    {
        if (\strlen($this->buffer) <= $length) {
            $data = $this->buffer;
            $this->buffer = '';
            return $data;
        }
        $data = \substr($this->buffer, 0, $length);
        $this->buffer = \substr($this->buffer, $length);
        return $data;
    }

    private function waiter(): IoWaiter
    {
        return $this->waiter ??= new IoWaiter($this->resource);
    }

    /** SO_ERROR of a socket whose non-blocking connect finished. */
    private static function pendingError(mixed $resource): int
    {
        if (!\function_exists('socket_import_stream')) {
            return 0;
        }
        $socket = @\socket_import_stream($resource);
        if ($socket === false) {
            return 0;
        }
        $error = @\socket_get_option($socket, \SOL_SOCKET, \SO_ERROR);
        return \is_int($error) ? $error : 0;
    }
}
