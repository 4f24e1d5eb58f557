<?php

declare(strict_types=1);

namespace Weft\Line;

use Weft\Server\Connection;

/**
 * The other end, as a line handler sees it: who it is, a way to push extra lines or hang up, and state
 * kept for it. (Not the server's Connection, which it wraps: that one is the socket, its buffers and timers.)
 */
final class Peer
{
    private bool $closeRequested = false;
    /** @var array<string, mixed> */
    private array $attributes = [];

    /** @internal */
    public function __construct(public readonly int $id, private readonly Connection $connection, private readonly string $ending = "\n")
    {
    }

    /** Sends a line now, ahead of the handler's reply. */
    public function send(string $line): void
    {
        $this->connection->write($line . $this->ending);
        $this->connection->flush();
    }

    /** Closes the connection once the current reply is sent. */
    public function close(): void
    {
        $this->closeRequested = true;
    }

    public function isCloseRequested(): bool
    {
        return $this->closeRequested;
    }

    public function remoteAddress(): ?string
    {
        return $this->connection->remoteAddress();
    }

    /** Per-connection state for the application (a session), gone when the connection ends. */
    public function set(string $key, mixed $value): void
    {
        $this->attributes[$key] = $value;
    }

    public function get(string $key, mixed $default = null): mixed
    {
        return $this->attributes[$key] ?? $default;
    }
}

// The deprecated former name (see Connection.php). Declared with the class, not on first use: PHP does not
// autoload for a parameter type, so a handler typed Weft\Line\Connection needs the name to exist already.
\class_alias(Peer::class, 'Weft\Line\Connection');
