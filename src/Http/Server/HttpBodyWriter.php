<?php

declare(strict_types=1);

namespace Weft\Http\Server;

use Weft\Http\Message\BodyWriter;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Message\ResponseEncoder;
use Weft\Server\Connection;
use Weft\Socket\ConnectionClosed;

/**
 * Writes a streamed response body through the connection's writer: chunk-encoded, or raw within a
 * declared Content-Length, which it enforces (a byte beyond it would start a forged next response).
 * Suspends the producer while the connection's unsent output is over its bound, or the worker's over
 * its budget (Connection::waitForRoom()), before it makes the next chunk. A chunked body ends with the
 * response's trailers (end()).
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

    /**
     * A response with trailers as HTTP/1.x can carry it: only a chunked body has a trailer section (RFC
     * 9112 §7.1.2). On HTTP/1.1 a response with a body becomes a stream without Content-Length (a string
     * body written as one chunk), which the encoder frames chunked; where no trailer section can go
     * (HTTP/1.0, 1xx, 204, 304, a string body the application chunked itself) they are dropped. Fixed
     * trailers are checked here, before the head: a bad one makes the answer a 500, as a bad header does.
     * A streamed body's declared Content-Length leaves the head but is still enforced (DeclaredLength).
     */
    public static function forTrailers(Response $response, Request $request, ApplicationCall $call): Response
    {
        $status = $response->status();
        if ($request->version() === '1.0' || $status < 200 || $status === 204 || $status === 304
            || (!$response->isStreamed() && $response->hasHeader('transfer-encoding'))) {
            return $response->withTrailers([]);
        }
        if (\is_array($response->trailers())) {
            try {
                $response->trailerFields();
            } catch (\InvalidArgumentException $e) {
                $call->log($request, $e, '{method} {target}: the response cannot be sent: {message}');
                return $call->error();
            }
        }
        $chunked = $response->withoutHeader('content-length');
        if ($chunked->isStreamed()) {
            $declared = $response->header('content-length');
            if ($declared === null) {
                return $chunked;
            }
            if (!\ctype_digit($declared)) {
                $call->log($request, new \InvalidArgumentException('Content-Length must be a non-negative integer'), '{method} {target}: the response cannot be sent: {message}');
                return $call->error();
            }
            // Chunked for its trailers, but still held to the length it declared (DeclaredLength).
            $producer = $chunked->producer();
            $length = (int) $declared;
            $held = Response::stream(static function (BodyWriter $writer) use ($producer, $length): void {
                $declared = new DeclaredLength($writer, $length);
                $producer($declared);
                $declared->end();
            }, $status, $chunked->headers())->withTrailers($chunked->trailers() ?? []);
            return $chunked->hasCustomReason() ? $held->withStatus($status, $chunked->reason()) : $held;
        }
        $body = $chunked->body();
        $streamed = Response::stream(static function (BodyWriter $writer) use ($body): void {
            $writer->write($body);
        }, $status, $chunked->headers())->withTrailers($chunked->trailers() ?? []);
        return $chunked->hasCustomReason() ? $streamed->withStatus($status, $chunked->reason()) : $streamed;
    }

    /**
     * Ends the body: a chunked one with its last chunk and the response's trailers, evaluated now.
     *
     * @throws \Throwable from Response::trailerFields(): nothing is written then
     */
    public function end(Response $response): void
    {
        if ($this->chunked !== null) {
            $this->connection->write($this->chunked->lastChunk($response->hasTrailers() ? $response->trailerFields() : []));
        }
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
