<?php

declare(strict_types=1);

namespace Weft\WebSocket;

/**
 * The server side of RFC 6455 framing, pure: bytes in, complete messages and control frames out, or a
 * ProtocolError carrying the close code. Enforces masking (clients must mask), reserved bits and
 * opcodes, control-frame rules (final, at most 125 bytes, allowed between fragments), fragment order,
 * the message size limit (checked from a frame's header, before its payload is buffered) and strict
 * UTF-8 in text messages and close reasons, checked fragment by fragment and, within a frame, as its
 * payload arrives.
 *
 * next() returns [opcode, payload]: TEXT or BINARY for a whole message, PING, PONG, or CLOSE (payload
 * already checked: empty, or a sendable code and a UTF-8 reason).
 */
final class Decoder
{
    private string $buffer = '';
    private int $offset = 0;
    /** TEXT or BINARY while a fragmented message is in progress, else -1. */
    private int $fragmented = -1;
    private string $fragments = '';
    /** Bytes of $fragments already known to be valid UTF-8 (a character boundary). */
    private int $checked = 0;
    /** Payload bytes of the incomplete text frame at the head of the buffer already checked (a character boundary). */
    private int $partial = 0;

    public function __construct(public readonly int $maxMessage)
    {
        if ($maxMessage < 1) {
            throw new \InvalidArgumentException('The WebSocket message limit must be at least 1 byte');
        }
    }

    public function push(string $bytes): void
    {
        if ($this->offset === 0) {
            $this->buffer .= $bytes;
            return;
        }
        $this->buffer = \substr($this->buffer, $this->offset) . $bytes;
        $this->offset = 0;
    }

    /** Bytes held of frames not yet decoded and of a fragmented message being assembled. */
    public function heldBytes(): int
    {
        return \strlen($this->buffer) - $this->offset + \strlen($this->fragments);
    }

    /** Drops everything held: the connection is being closed and nothing more is decoded. */
    public function discard(): void
    {
        $this->buffer = $this->fragments = '';
        $this->offset = $this->checked = $this->partial = 0;
        $this->fragmented = -1;
    }

    /** Nothing of a frame or of a fragmented message is held. */
    public function isEmpty(): bool
    {
        return $this->fragmented === -1 && \strlen($this->buffer) === $this->offset;
    }

    /**
     * @return array{int, string}|null
     * @throws ProtocolError
     */
    public function next(): ?array
    {
        while (true) {
            $buffer = $this->buffer;
            $offset = $this->offset;
            $available = \strlen($buffer) - $offset;
            if ($available < 2) {
                return null;
            }
            $first = \ord($buffer[$offset]);
            $second = \ord($buffer[$offset + 1]);
            $opcode = $first & 0x0F;
            if (($first & 0x70) !== 0) {
                throw ProtocolError::protocol('reserved bits set without a negotiated extension');
            }
            if (($second & 0x80) === 0) {
                throw ProtocolError::protocol('client frames must be masked');
            }
            $length = $second & 0x7F;
            $head = 6;
            if ($length === 126) {
                if ($available < 4) {
                    return null;
                }
                $length = (\ord($buffer[$offset + 2]) << 8) | \ord($buffer[$offset + 3]);
                $head = 8;
            } elseif ($length === 127) {
                if ($available < 10) {
                    return null;
                }
                $length = \unpack('J', $buffer, $offset + 2)[1];
                if ($length < 0) {
                    throw ProtocolError::protocol('frame length with the most significant bit set');
                }
                $head = 14;
            }
            if ($opcode >= 0x8) {
                if ($opcode > Frame::PONG) {
                    throw ProtocolError::protocol("reserved control opcode $opcode");
                }
                if (($first & 0x80) === 0) {
                    throw ProtocolError::protocol('fragmented control frame');
                }
                if ($length > 125) {
                    throw ProtocolError::protocol('control frame payload over 125 bytes');
                }
            } elseif ($opcode > Frame::BINARY) {
                throw ProtocolError::protocol("reserved data opcode $opcode");
            } elseif ($opcode === Frame::CONTINUATION) {
                if ($this->fragmented === -1) {
                    throw ProtocolError::protocol('continuation frame without a message to continue');
                }
                if (\strlen($this->fragments) + $length > $this->maxMessage) {
                    throw ProtocolError::tooBig($this->maxMessage);
                }
            } else {
                if ($this->fragmented !== -1) {
                    throw ProtocolError::protocol('a new message started inside a fragmented one');
                }
                if ($length > $this->maxMessage) {
                    throw ProtocolError::tooBig($this->maxMessage);
                }
            }
            if ($available < $head + $length) {
                if ($available > $head + $this->partial && ($opcode === Frame::TEXT || ($opcode === Frame::CONTINUATION && $this->fragmented === Frame::TEXT))) {
                    $this->checkPartial($buffer, $offset + $head, $available - $head, $opcode === Frame::CONTINUATION);
                }
                return null;
            }
            $this->partial = 0;
            $payload = $length === 0 ? '' : \substr($buffer, $offset + $head, $length) ^ \str_repeat(\substr($buffer, $offset + $head - 4, 4), ($length >> 2) + 1);
            $offset += $head + $length;
            if ($offset === \strlen($buffer)) {
                $this->buffer = '';
                $this->offset = 0;
            } else {
                $this->offset = $offset;
            }

            if ($opcode >= 0x8) {
                if ($opcode === Frame::CLOSE) {
                    self::checkClose($payload);
                }
                return [$opcode, $payload];
            }
            $fin = ($first & 0x80) !== 0;
            if ($opcode !== Frame::CONTINUATION) {
                if ($fin) {
                    if ($opcode === Frame::TEXT && !Utf8::valid($payload)) {
                        throw ProtocolError::invalidUtf8('a text message');
                    }
                    return [$opcode, $payload];
                }
                $this->fragmented = $opcode;
                $this->fragments = $payload;
                $this->checked = 0;
            } else {
                $this->fragments .= $payload;
            }
            if ($this->fragmented === Frame::TEXT) {
                $this->checkFragments($fin);
            }
            if ($fin) {
                $message = [$this->fragmented, $this->fragments];
                $this->fragmented = -1;
                $this->fragments = '';
                return $message;
            }
        }
    }

    /**
     * Fail fast inside a frame: the part of an incomplete text frame's payload that has arrived is
     * checked as it comes (from where the last read's check stopped), so text that can never be
     * UTF-8 is refused at once rather than after the rest of a large frame has been buffered.
     * The complete frame is checked again as usual; this only decides earlier.
     *
     * @throws ProtocolError
     */
    private function checkPartial(string $buffer, int $payloadAt, int $have, bool $continuation): void
    {
        $from = $this->partial;
        $mask = \substr($buffer, $payloadAt - 4, 4);
        $key = \substr($mask . $mask, $from & 3, 4);   // the mask, rotated to where $from falls
        $count = $have - $from;
        $text = \substr($buffer, $payloadAt + $from, $count) ^ \str_repeat($key, ($count >> 2) + 1);
        // The frame's first bytes may finish a character that earlier fragments started.
        $lead = $from === 0 && $continuation ? \strlen($this->fragments) - $this->checked : 0;
        if ($lead > 0) {
            $text = \substr($this->fragments, $this->checked) . $text;
        }
        $tail = Utf8::incompleteTail($text);
        if ($tail < 0) {
            throw ProtocolError::invalidUtf8('a text message');
        }
        $end = \strlen($text) - $tail;
        if ($end > 0 && !Utf8::valid(\substr($text, 0, $end))) {
            throw ProtocolError::invalidUtf8('a text message');
        }
        $this->partial = \max($from, $from + $end - $lead);
    }

    /** Checks the text received so far, up to a character cut by the fragment boundary. */
    private function checkFragments(bool $final): void
    {
        $tail = $final ? 0 : Utf8::incompleteTail($this->fragments);
        if ($tail < 0) {
            throw ProtocolError::invalidUtf8('a text message');
        }
        $end = \strlen($this->fragments) - $tail;
        if ($end > $this->checked) {
            if (!Utf8::valid(\substr($this->fragments, $this->checked, $end - $this->checked))) {
                throw ProtocolError::invalidUtf8('a text message');
            }
            $this->checked = $end;
        }
    }

    private static function checkClose(string $payload): void
    {
        $length = \strlen($payload);
        if ($length === 0) {
            return;
        }
        if ($length === 1) {
            throw ProtocolError::protocol('close frame with a one-byte payload');
        }
        $code = (\ord($payload[0]) << 8) | \ord($payload[1]);
        if (!CloseCode::isSendable($code)) {
            throw ProtocolError::protocol("close code $code is not allowed on the wire");
        }
        if ($length > 2 && !Utf8::valid(\substr($payload, 2))) {
            throw ProtocolError::invalidUtf8('a close reason');
        }
    }
}
