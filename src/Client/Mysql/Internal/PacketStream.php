<?php

declare(strict_types=1);

namespace Weft\Client\Mysql\Internal;

use Weft\Coroutine\IoWaiter;
use Weft\Coroutine\Timeout;
use Weft\Socket\ConnectionClosed;
use Weft\Socket\Socket;

/**
 * Packet framing over a Socket: 3-byte little-endian payload length + 1-byte sequence id, payloads of
 * 16 MiB - 1 and more split over several packets.
 *
 * Reads go through one string buffer with an offset, so a burst of small packets (a result set) is cut
 * out with one substr() each and the buffer is compacted once per socket read, never per packet.
 * They read the Socket's stream directly and wait with the core wait primitive (IoWaiter): a point
 * select is a few microseconds of client work, and Socket::read()'s own buffering added a third to it.
 * The Socket still connects, upgrades to TLS, writes and closes; its read buffer is never used here.
 *
 * @internal
 */
final class PacketStream
{
    private const READ_CHUNK = 65536;
    private const LARGE = 1 << 20;

    private string $buffer = '';
    private int $offset = 0;
    /** The sequence id expected on the next packet read or used for the next packet written. */
    public int $sequence = 0;
    /** Absolute deadline (hrtime seconds) for reads, e.g. the connect timeout during the handshake. */
    public ?float $deadline = null;

    /** @var resource */
    private readonly mixed $stream;
    private ?IoWaiter $waiter = null;

    private ?bool $plain = null;
    private bool $awaitAnswer = false;

    public function __construct(public readonly Socket $socket)
    {
        $this->stream = $socket->resource();
    }

    /** Starts a new command: sequence 0, payload written in one go. */
    public function writeCommand(string $payload): void
    {
        $this->sequence = 0;
        $this->write($payload);
        // The answer to a command just written cannot be there yet: wait before reading, and save the
        // read that would only say EAGAIN. Not over TLS, where decrypted bytes may sit in OpenSSL's
        // buffer without the socket being readable.
        $this->plain ??= !isset(\stream_get_meta_data($this->stream)['crypto']);
        $this->awaitAnswer = $this->plain && $this->offset === \strlen($this->buffer);
    }

    /** Writes a payload continuing the current sequence (handshake responses, auth data). */
    public function write(string $payload): void
    {
        $length = \strlen($payload);
        if ($length < Protocol::MAX_PACKET) {
            $this->socket->write(\pack('V', $length | ($this->sequence << 24)) . $payload);
            $this->sequence = ($this->sequence + 1) & 0xFF;
            return;
        }
        // Split: full 16 MiB - 1 packets, then the rest (an empty packet when it divides evenly).
        for ($offset = 0; ; $offset += Protocol::MAX_PACKET) {
            $chunk = \min(Protocol::MAX_PACKET, $length - $offset);
            $this->socket->write(\pack('V', $chunk | ($this->sequence << 24)));
            if ($chunk > 0) {
                $this->socket->write(\substr($payload, $offset, $chunk));
            }
            $this->sequence = ($this->sequence + 1) & 0xFF;
            if ($chunk < Protocol::MAX_PACKET) {
                return;
            }
        }
    }

    /**
     * Returns the next payload (joined when it spans several packets).
     *
     * @throws ProtocolViolation|ConnectionClosed|Timeout
     */
    public function read(): string
    {
        $available = \strlen($this->buffer) - $this->offset;
        if ($available >= 4) {
            $header = \unpack('V', $this->buffer, $this->offset)[1];
            $length = $header & 0xFFFFFF;
            if ($available >= $length + 4 && $length < Protocol::MAX_PACKET) {
                if (($header >> 24) !== $this->sequence) {
                    throw ProtocolViolation::sequence($this->sequence, $header >> 24);
                }
                $this->sequence = ($this->sequence + 1) & 0xFF;
                $payload = \substr($this->buffer, $this->offset + 4, $length);
                $this->offset += $length + 4;
                return $payload;
            }
        }
        return $this->readSlow();
    }

    /** Bytes received and not yet consumed: non-zero between commands means the stream is out of sync. */
    public function pending(): int
    {
        return \strlen($this->buffer) - $this->offset + $this->socket->buffered();
    }

    /** Drops the wait watcher; must come before the socket is closed. */
    public function close(): void
    {
        $this->waiter?->close();
        $this->buffer = '';
        $this->offset = 0;
    }

    private function readSlow(): string
    {
        $payload = '';
        do {
            $this->need(4);
            $header = \unpack('V', $this->buffer, $this->offset)[1];
            $length = $header & 0xFFFFFF;
            if (($header >> 24) !== $this->sequence) {
                throw ProtocolViolation::sequence($this->sequence, $header >> 24);
            }
            $this->sequence = ($this->sequence + 1) & 0xFF;
            $this->need($length + 4);
            $payload .= \substr($this->buffer, $this->offset + 4, $length);
            $this->offset += $length + 4;
        } while ($length === Protocol::MAX_PACKET);
        return $payload;
    }

    private function waitReadable(): void
    {
        $timeout = null;
        if ($this->deadline !== null) {
            $timeout = $this->deadline - \hrtime(true) / 1e9;
            if ($timeout <= 0) {
                throw Timeout::after(0.0, 'Read');
            }
        }
        ($this->waiter ??= new IoWaiter($this->stream))->readable($timeout);
        if (!\is_resource($this->stream)) {
            throw ConnectionClosed::local('read');
        }
    }

    /** Makes sure $bytes bytes are buffered from the current offset on. */
    private function need(int $bytes): void
    {
        if (\strlen($this->buffer) - $this->offset >= $bytes) {
            return;
        }
        if ($this->offset > 0) {
            $this->buffer = (string) \substr($this->buffer, $this->offset);
            $this->offset = 0;
        }
        // A large packet is collected in parts and joined once: appending 64 KiB at a time to a
        // growing string could copy it over and over.
        $have = \strlen($this->buffer);
        $parts = $bytes - $have > self::LARGE ? [$this->buffer] : null;
        while ($have < $bytes) {
            if ($this->awaitAnswer) {
                $this->awaitAnswer = false;
                $this->waitReadable();
            }
            // Read first, wait only when nothing is there: TLS may hold decrypted bytes the kernel no
            // longer shows as readable.
            $data = @\fread($this->stream, \min(\max(self::READ_CHUNK, $bytes - $have), self::LARGE));
            if ($data !== false && $data !== '') {
                $have += \strlen($data);
                if ($parts === null) {
                    $this->buffer .= $data;
                } else {
                    $parts[] = $data;
                }
                continue;
            }
            if ($data === false || \feof($this->stream)) {
                throw ConnectionClosed::byPeer(\sprintf('reading a packet (%d of %d bytes received)', $have, $bytes));
            }
            $this->waitReadable();
        }
        if ($parts !== null) {
            $this->buffer = \implode('', $parts);
        }
    }
}
