<?php

declare(strict_types=1);

namespace Weft\Line;

use Weft\Server\Connection as ServerConnection;

/** What a line handler sees of its connection: who it is, and a way to push extra lines or hang up. */
final class Connection
{
    private bool $closeRequested = false;
    /** @var array<string, mixed> */
    private array $attributes = [];

    /** @internal */
    public function __construct(public readonly int $id, private readonly ServerConnection $connection, private readonly string $ending = "\n")
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
