<?php

declare(strict_types=1);

namespace Weft\Socket\Tls;

use Psr\Log\LoggerInterface;
use Weft\Loop\Driver;

/**
 * Takes accepted TCP connections through the server side of the TLS handshake, driven by the loop: a
 * handshake never blocks the worker. PHP's OpenSSL stream layer does the work; on a non-blocking stream
 * stream_socket_enable_crypto() returns 0 while it needs more from the client, and this retries it each
 * time the socket becomes readable. Each handshake has its own deadline (--tls-handshake-timeout).
 * With the native extension, the stream first gets an SSL of the worker's one context, which also
 * carries the ticket keys shared by the workers (ext/weft_tls.c); without it PHP builds a context per
 * connection and no session resumes.
 *
 * Outcomes, one per connection, never more than that connection:
 * - a ClientHello that completes: the connection goes to $onReady with what was agreed (TlsSession);
 * - a client that stalls (sends nothing, or half a hello): closed at the deadline;
 * - a plain HTTP request on the TLS port: answered 400 "The plain HTTP request was sent to HTTPS port"
 *   (nginx's words) and closed;
 * - anything else that is not a TLS handshake record, or a handshake OpenSSL rejects (garbage, a
 *   truncated or malformed hello, no shared protocol version or cipher): closed; logged at debug level.
 *
 * @internal used by the server's worker
 */
final class TlsAcceptor
{
    /** A TLS record of type handshake (22) starts every ClientHello. */
    private const HANDSHAKE_RECORD = "\x16";
    private const PLAIN_HTTP_BODY = "400 Bad Request\nThe plain HTTP request was sent to HTTPS port\n";

    /** @var array<int, array{0: resource, 1: ?string, 2: ?string, 3: string, 4: bool}> stream, peer, read watcher, timer, record seen */
    private array $pending = [];
    private int $nextId = 1;
    private int $completed = 0;
    private int $failed = 0;
    private int $resumed = 0;
    /** Whether tickets shared across workers are on (TicketKeys, the native extension). */
    private bool $tickets = false;
    /** Whether connections get an SSL of this worker's one native context (Weft\Ext\tlsAttach()). */
    private bool $native = false;
    private int $ticketPeriod = 0;

    /**
     * @param array<string, mixed> $contextOptions what prepare() set on the listener
     * @param \Closure(resource, ?string, TlsSession): void $onReady gets each connection once encrypted
     * @param \Closure(): void $onSettled called after each handshake ends, however it ends
     * @param int $maxPending handshakes in progress at most; more connections are closed at once
     */
    public function __construct(
        private readonly TlsConfig $config,
        array $contextOptions,
        private readonly Driver $driver,
        private readonly LoggerInterface $logger,
        private readonly \Closure $onReady,
        private readonly \Closure $onSettled,
        private readonly int $maxPending,
    ) {
        $this->tickets = $config->tickets !== null && self::ticketsWork($logger);
        if ($this->tickets) {
            $this->rotateTickets();
            $driver->unreference($driver->repeat(10.0, $this->rotateTickets(...)));
            $this->native = $this->nativeContext($contextOptions);
        }
    }

    /**
     * One SSL_CTX per worker (and per SNI name), built by the extension from the same pinned files and
     * policy, instead of the one PHP builds, decoding the certificate and key again, for every
     * connection. Only once the layout check passed (ticketsWork()); on any failure PHP's path serves.
     *
     * @param array<string, mixed> $options
     */
    private function nativeContext(array $options): bool
    {
        $certificates = [[null, $options['local_cert'], $options['local_pk']]];
        foreach ($options['SNI_server_certs'] ?? [] as $name => $files) {
            $certificates[] = [(string) $name, $files['local_cert'], $files['local_pk']];
        }
        $alpn = '';
        foreach ($this->config->alpn as $protocol) {
            $alpn .= \chr(\strlen($protocol)) . $protocol;
        }
        try {
            \Weft\Ext\tlsContext($certificates, $this->config->ciphers, $alpn, TicketKeys::LIFETIME);
        } catch (\Throwable $e) {
            $this->logger->warning("TLS: the native context could not be built ({message}); PHP's OpenSSL layer serves the handshakes", ['message' => $e->getMessage()]);
            return false;
        }
        return true;
    }

    /**
     * Whether the native extension can make PHP's per-connection SSL_CTX use the shared ticket keys:
     * checked once at start on a connection of our own (ext/weft_tls.c checks PHP's private layout).
     * Without it, resumption is off, and said so.
     */
    private static function ticketsWork(LoggerInterface $logger): bool
    {
        if (!\function_exists('Weft\Ext\tlsShareTickets')) {
            return false; // the master's start-up log says so once
        }
        $server = @\stream_socket_server('tcp://127.0.0.1:0', $errno, $error);
        $result = null;
        if ($server !== false) {
            $client = @\stream_socket_client('tcp://' . \stream_socket_get_name($server, false), $errno, $error, 1.0);
            $accepted = $client === false ? false : @\stream_socket_accept($server, 1.0);
            if ($accepted !== false) {
                \stream_set_blocking($accepted, false);
                $result = \Weft\Ext\tlsShareTickets($accepted, TlsConfig::METHOD, TicketKeys::LIFETIME);
                \fclose($accepted);
            }
            if ($client !== false) {
                \fclose($client);
            }
            \fclose($server);
        }
        \error_clear_last();
        if ($result !== 1) {
            $logger->warning('TLS session resumption off in this worker: {why}', ['why' => $result === -1
                ? "PHP's OpenSSL stream layout is not the one this build of the extension knows"
                : 'the start-up check could not run on a loopback connection']);
            return false;
        }
        return true;
    }

    private function rotateTickets(): void
    {
        $period = TicketKeys::period(\microtime(true));
        if ($period !== $this->ticketPeriod) {
            $this->ticketPeriod = $period;
            \Weft\Ext\tlsTicketKeys($this->config->tickets->keysFor($period));
        }
    }

    /**
     * Sets the listener up for TLS: PHP's accepted streams take their "ssl" options from the listening
     * socket's context. Checks the certificates first (a worker that cannot serve them must not start).
     *
     * @param resource $listener
     * @return array<string, mixed> the options set, for the constructor
     * @throws TlsConfigError
     */
    public static function prepare(TlsConfig $config, mixed $listener): array
    {
        $options = $config->contextOptions(new PinnedFiles());
        \stream_context_set_option($listener, ['ssl' => $options]);
        return $options;
    }

    /** Starts the handshake of a connection just accepted. @param resource $stream */
    public function start(mixed $stream, ?string $peer): void
    {
        if (\count($this->pending) >= $this->maxPending) {
            $this->failed++;
            \fclose($stream);
            return;
        }
        \stream_set_blocking($stream, false);
        $id = $this->nextId++;
        $timer = $this->driver->delay($this->config->handshakeTimeout, function () use ($id): void {
            $this->fail($id, 'no complete handshake within --tls-handshake-timeout');
        });
        $this->pending[$id] = [$stream, $peer, null, $timer, false];
        if ($this->native) {
            // 0 (not applicable): PHP's own setup below serves it.
            \Weft\Ext\tlsAttach($stream);
        } elseif ($this->tickets && \Weft\Ext\tlsShareTickets($stream, TlsConfig::METHOD, TicketKeys::LIFETIME) === -1) {
            $this->tickets = false;
            $this->logger->warning("TLS session resumption off in this worker: PHP's OpenSSL stream layout is not the one this build of the extension knows");
        }
        $this->advance($id);
    }

    /** Handshakes in progress. */
    public function pending(): int
    {
        return \count($this->pending);
    }

    /** @return array{tls_native: bool, tls_handshakes: int, tls_resumed: int, tls_handshake_failures: int, tls_handshakes_pending: int} */
    public function stats(): array
    {
        return ['tls_native' => $this->native, 'tls_handshakes' => $this->completed, 'tls_resumed' => $this->resumed, 'tls_handshake_failures' => $this->failed, 'tls_handshakes_pending' => \count($this->pending)];
    }

    /** Ends every handshake in progress (the grace period is over). */
    public function closeAll(): void
    {
        foreach (\array_keys($this->pending) as $id) {
            $this->fail($id, 'the worker stops');
        }
    }

    private function advance(int $id): void
    {
        if (!isset($this->pending[$id])) {
            return;
        }
        [$stream, $peer, $watcher, , $seen] = $this->pending[$id];
        if (!$seen) {
            // Look before OpenSSL does: what is not a TLS record gets a defined answer of our own.
            $head = @\stream_socket_recvfrom($stream, 8, \STREAM_PEEK);
            if ($head === false) {
                \error_clear_last();
                $this->wait($id, $watcher); // nothing yet
                return;
            }
            if ($head === '') {
                $this->fail($id, 'closed by the client before its hello');
                return;
            }
            if ($head[0] !== self::HANDSHAKE_RECORD) {
                if (\preg_match('/^[A-Z]{1,8}( |$)/', $head) === 1) {
                    $this->answerPlainHttp($stream);
                    $this->fail($id, 'plain HTTP on the TLS port: answered 400');
                } else {
                    $this->fail($id, 'not a TLS handshake record');
                }
                return;
            }
            $this->pending[$id][4] = true;
        }
        $done = @\stream_socket_enable_crypto($stream, true, TlsConfig::METHOD);
        if ($done === 0) {
            \error_clear_last();
            $this->wait($id, $watcher);
            return;
        }
        if ($done !== true) {
            $error = \error_get_last()['message'] ?? 'the handshake failed';
            \error_clear_last();
            while (\openssl_error_string() !== false) {
            }
            $this->fail($id, $error);
            return;
        }
        $this->forget($id);
        $this->completed++;
        if ($this->tickets && \Weft\Ext\tlsSessionReused($stream) === true) {
            $this->resumed++;
        }
        ($this->onReady)($stream, $peer, TlsSession::of($stream));
        ($this->onSettled)();
    }

    private function wait(int $id, ?string $watcher): void
    {
        if ($watcher === null) {
            $this->pending[$id][2] = $this->driver->onReadable($this->pending[$id][0], function () use ($id): void {
                $this->advance($id);
            });
        }
    }

    private function fail(int $id, string $why): void
    {
        if (!isset($this->pending[$id])) {
            return;
        }
        [$stream, $peer] = $this->pending[$id];
        $this->forget($id);
        $this->failed++;
        if (\is_resource($stream)) {
            @\fclose($stream);
            \error_clear_last();
        }
        $this->logger->debug('TLS handshake with {peer} failed: {why}', ['peer' => $peer ?? '?', 'why' => $why]);
        ($this->onSettled)();
    }

    private function forget(int $id): void
    {
        [, , $watcher, $timer] = $this->pending[$id];
        unset($this->pending[$id]);
        if ($watcher !== null) {
            $this->driver->cancel($watcher);
        }
        $this->driver->cancel($timer);
    }

    /**
     * nginx's answer to the same mistake. What the client sent is read first (what is there of it), so
     * that the close does not reset the connection under the answer.
     *
     * @param resource $stream
     */
    private function answerPlainHttp(mixed $stream): void
    {
        @\fread($stream, 65536);
        @\fwrite($stream, "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: " . \strlen(self::PLAIN_HTTP_BODY)
            . "\r\nConnection: close\r\n\r\n" . self::PLAIN_HTTP_BODY);
        @\stream_socket_shutdown($stream, \STREAM_SHUT_WR);
        \error_clear_last();
    }
}
