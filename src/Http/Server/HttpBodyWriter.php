<?php

declare(strict_types=1);

namespace Weft\Http\Server;

use Weft\Http\Message\BodyWriter;
use Weft\Http\Message\ResponseEncoder;
use Weft\Server\Connection;
use Weft\Socket\ConnectionClosed;

/**
 * Writes a streamed response body through the connection's writer: chunk-encoded, or raw within a
 * declared Content-Length, which it enforces (a byte beyond it would start a forged next response).
 * Suspends the producer while the connection's unsent output is over its bound, or the worker's over
 * its budget (Connection::waitForRoom()), before it makes the next chunk.
 *
 * @internal
 */
final class HttpBodyWriter implements BodyWriter
{
    private int $written = 0;
    private bool $overflowed = false;

    public function __construct(
        private readonly Connection $connection,
        private readonly ?ResponseEncoder $chunked,
        private readonly ?int $length,
    ) {
    }

    /** @throws BodyLengthMismatch beyond the declared length (the excess is not sent) @throws ConnectionClosed */
    public function write(string $chunk): void
    {
        if ($chunk === '') {
            return;
        }
        if ($this->connection->isClosed()) {
            throw ConnectionClosed::local('write');
        }
        if ($this->length !== null) {
            $room = $this->length - $this->written;
            if (\strlen($chunk) > $room) {
                if (!$this->overflowed && $room > 0) {
                    $this->connection->write(\substr($chunk, 0, $room));
                    $this->connection->flush();
                }
                $this->written = $this->length;
                $this->overflowed = true;
                throw BodyLengthMismatch::tooLong($this->length);
            }
        }
        $this->written += \strlen($chunk);
        $this->connection->write($this->chunked === null ? $chunk : $this->chunked->encodeChunk($chunk));
        // Not held here while the producer waits: the queue holds it (and counts it in the worker's
        // budget), and a connection closed meanwhile frees it at once, not when this coroutine unwinds.
        unset($chunk);
        $this->connection->flush();
        $this->connection->waitForRoom();
    }

    /** Whether the body is complete: its declared length reached exactly (always, when chunked). */
    public function isComplete(): bool
    {
        return $this->length === null || ($this->written === $this->length && !$this->overflowed);
    }

    public function written(): int
    {
        return $this->written;
    }
}
