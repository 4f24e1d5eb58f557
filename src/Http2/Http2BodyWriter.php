<?php

declare(strict_types=1);

namespace Weft\Http2;

use Weft\Http\Message\BodyWriter;
use Weft\Http\Server\BodyLengthMismatch;
use Weft\Socket\ConnectionClosed;

/**
 * A streamed response body on one HTTP/2 stream: each write is queued as DATA, sent as far as the
 * flow-control windows admit, and the producer waits while its stream holds more than a bounded queue
 * (a peer that never opens its window holds a producer, not memory). A declared Content-Length is
 * enforced as on HTTP/1.1.
 *
 * @internal
 */
final class Http2BodyWriter implements BodyWriter
{
    private int $written = 0;

    public function __construct(
        private readonly Http2Session $session,
        private readonly Http2Stream $stream,
        private readonly ?int $length,
    ) {
    }

    /** @throws BodyLengthMismatch @throws ConnectionClosed when the stream was reset or the connection ended */
    public function write(string $chunk): void
    {
        if ($chunk === '') {
            return;
        }
        if ($this->length !== null && \strlen($chunk) > $this->length - $this->written) {
            $room = $this->length - $this->written;
            if ($room > 0) {
                $this->session->queueData($this->stream, \substr($chunk, 0, $room), false);
            }
            $this->written = $this->length;
            throw BodyLengthMismatch::tooLong($this->length);
        }
        $this->written += \strlen($chunk);
        $this->session->queueData($this->stream, $chunk, false);
        unset($chunk);
        $this->session->waitForWindow($this->stream);
    }

    public function isComplete(): bool
    {
        return $this->length === null || $this->written === $this->length;
    }

    public function written(): int
    {
        return $this->written;
    }
}
