<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\Socket\Acceptor;
use Weft\Socket\Listener;
use Weft\Socket\Socket;

/**
 * The control socket beside the pid file (PIDFILE.sock, mode 0600), through which `bin/weft status` and
 * `reload` talk to a running master (Weft's own, or the fpm mode's supervisor). Its wire format, both
 * ends of it: the client sends one command line ("status"); the server answers one JSON document and a
 * newline, then closes.
 */
final class ControlSocket
{
    private const MAX_COMMAND = 128;
    private const IO_TIMEOUT = 5.0;
    private const JSON_FLAGS = \JSON_THROW_ON_ERROR | \JSON_PRETTY_PRINT | \JSON_UNESCAPED_SLASHES | \JSON_INVALID_UTF8_SUBSTITUTE;

    private function __construct(private readonly Listener $listener, private readonly string $path)
    {
    }

    /**
     * Listens on $path, created 0600 (the socket answers status and reload to whoever can connect). A
     * socket left by a crash is replaced; anything else there (a symbolic link, a file) is refused.
     *
     * @throws UnsafePath|\Weft\Socket\ListenException
     */
    public static function open(string $path): self
    {
        \clearstatcache(true, $path);
        $stat = @\lstat($path);
        if ($stat !== false && ($stat['mode'] & 0170000) !== 0140000) {
            throw new UnsafePath("'$path' exists and is not a socket (a symbolic link or a file put there): refusing to replace it");
        }
        $umask = \umask(0177);
        try {
            return new self(Listener::listen('unix://' . $path), $path);
        } finally {
            \umask($umask);
        }
    }

    /**
     * Answers in coroutines until close(): for a master that runs the event loop.
     *
     * @param array<string, \Closure(): array<string, mixed>> $commands by command name
     */
    public function serve(array $commands): void
    {
        Acceptor::start($this->listener, static fn (Socket $client) => self::answer($client, $commands));
    }

    /**
     * Answers the connection waiting now, if there is one, and returns: for a process that waits in a
     * loop of its own (the fpm supervisor selects on resource()).
     *
     * @param array<string, \Closure(): array<string, mixed>> $commands
     * @param null|\Closure(\Throwable): void $failed told what went wrong in a command or its answer
     */
    public function answerWaiting(array $commands, ?\Closure $failed = null): void
    {
        try {
            $client = $this->listener->accept(0.001);
        } catch (\Weft\Coroutine\Timeout) {
            return; // it left between the select and the accept
        }
        try {
            self::answer($client, $commands, $failed);
        } finally {
            $client->close();
        }
    }

    /** @return resource the listening socket, for a select loop */
    public function resource(): mixed
    {
        return $this->listener->resource();
    }

    /** Stops listening; the socket file stays (a forked child closes its copy this way). */
    public function close(): void
    {
        $this->listener->close();
    }

    /** Stops listening and removes the socket file: the server is done. */
    public function remove(): void
    {
        $this->listener->close();
        @\unlink($this->path);
    }

    /**
     * Sends one command to the control socket at $socket and decodes its JSON answer (null: no answer).
     *
     * @return array<string, mixed>|null
     */
    public static function ask(string $socket, string $command, float $timeout): ?array
    {
        $stat = @\lstat($socket);
        if ($stat === false || ($stat['mode'] & 0170000) !== 0140000) {
            return null; // not there, or not a socket (a planted symlink is not followed)
        }
        $client = @\stream_socket_client('unix://' . $socket, $errno, $error, \min($timeout, 5.0));
        if ($client === false) {
            return null;
        }
        \fwrite($client, $command . "\n");
        // Read until the reply decodes, not until EOF: a worker forked while we were connected (a
        // reload) holds a copy of the master's end of this connection, which then never reaches EOF.
        $reply = '';
        $deadline = \microtime(true) + $timeout;
        \stream_set_blocking($client, false);
        while (($left = $deadline - \microtime(true)) > 0) {
            $read = [$client];
            $w = $e = null;
            if (@\stream_select($read, $w, $e, (int) $left, (int) (($left - (int) $left) * 1e6)) < 1) {
                continue;
            }
            $chunk = \fread($client, 65536);
            if ($chunk === '' || $chunk === false) {
                break;
            }
            $reply .= $chunk;
            if (\str_ends_with($reply, "\n") && \is_array($decoded = \json_decode($reply, true))) {
                \fclose($client);
                return $decoded;
            }
        }
        \fclose($client);
        $decoded = \json_decode($reply, true);
        return \is_array($decoded) ? $decoded : null;
    }

    /**
     * @param array<string, \Closure(): array<string, mixed>> $commands
     * @param null|\Closure(\Throwable): void $failed
     */
    private static function answer(Socket $client, array $commands, ?\Closure $failed = null): void
    {
        try {
            $command = \trim((string) $client->readLine(self::MAX_COMMAND, self::IO_TIMEOUT));
            $reply = isset($commands[$command]) ? ($commands[$command])() : ['error' => "unknown command '$command'"];
            $client->write(\json_encode($reply, self::JSON_FLAGS) . "\n", self::IO_TIMEOUT);
        } catch (\Throwable $e) {
            // A client that leaves or stalls gets nothing more; the server carries on.
            $failed?->__invoke($e);
        }
    }
}
