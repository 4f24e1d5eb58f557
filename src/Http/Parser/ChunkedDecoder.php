<?php

declare(strict_types=1);

namespace Weft\Http\Parser;

/**
 * Incremental decoder of one chunked body (RFC 9112 §7.1), for requests and responses alike.
 *
 * It consumes bytes from the owner's buffer as they arrive, so the raw framing never piles up
 * in memory: only the decoded body does, bounded by maxBodyBytes. Chunk extensions are checked
 * and dropped. Trailer fields are kept as a raw block, never merged into the headers (a trailer
 * must not be able to change framing or routing after the fact).
 *
 * @internal
 */
final class ChunkedDecoder
{
    private const SIZE = 0;
    private const DATA = 1;
    private const DATA_END = 2;
    private const TRAILERS = 3;

    /** Hex digits allowed for a size, leading zeros included: 64 covers any sane sender. */
    private const MAX_SIZE_DIGITS = 64;

    private int $state = self::SIZE;
    private int $remaining = 0;
    private int $extensionBytes = 0;
    private string $body = '';
    private string $trailerBlock = '';
    private readonly string $trailerPattern;

    public function __construct(private readonly Limits $limits)
    {
        $this->trailerPattern = '/\A' . Syntax::fields($limits->maxHeaderCount) . '\z/';
    }

    /**
     * Consumes what it can from $buffer starting at $offset, which it advances.
     *
     * @return bool whether the body, trailers included, is complete
     * @throws HttpError
     */
    public function decode(string $buffer, int &$offset): bool
    {
        $length = \strlen($buffer);
        while (true) {
            if ($this->state === self::DATA) {
                $available = $length - $offset;
                if ($available < $this->remaining) {
                    if ($available > 0) {
                        $this->body .= substr($buffer, $offset);
                        $this->remaining -= $available;
                        $offset = $length;
                    }
                    return false;
                }
                $this->body .= substr($buffer, $offset, $this->remaining);
                $offset += $this->remaining;
                $this->remaining = 0;
                $this->state = self::DATA_END;
            }

            if ($this->state === self::DATA_END) {
                if ($length - $offset < 2) {
                    if ($length > $offset && $buffer[$offset] !== "\r") {
                        throw HttpError::badRequest('Chunk data not followed by CRLF');
                    }
                    return false;
                }
                if ($buffer[$offset] !== "\r" || $buffer[$offset + 1] !== "\n") {
                    throw HttpError::badRequest('Chunk data not followed by CRLF');
                }
                $offset += 2;
                $this->state = self::SIZE;
            }

            if ($this->state === self::SIZE) {
                $eol = strpos($buffer, "\r\n", $offset);
                $maxLine = self::MAX_SIZE_DIGITS + $this->limits->maxChunkExtBytes - $this->extensionBytes;
                // A bare LF within the line's bounds fails it whatever else the line holds, whether its
                // CRLF has arrived or not: the error must not depend on how the bytes were split.
                $lf = strpos($buffer, "\n", $offset);
                if ($lf !== false && $lf <= $offset + $maxLine && ($eol === false || $lf < $eol)) {
                    throw Syntax::bareLf();
                }
                if ($eol === false) {
                    // The last byte may be the CR of the line's CRLF.
                    if ($length - $offset - ($length > $offset && $buffer[$length - 1] === "\r" ? 1 : 0) > $maxLine) {
                        throw HttpError::badRequest('Chunk size line too long');
                    }
                    return false;
                }
                if ($eol - $offset > $maxLine) {
                    throw HttpError::badRequest('Chunk size line too long');
                }
                $line = substr($buffer, $offset, $eol - $offset);
                if (preg_match('/\A([0-9A-Fa-f]++)([ \t]*+(?:;[^\x00-\x08\x0a-\x1f\x7f]*+)?)\z/', $line, $m) !== 1) {
                    throw HttpError::badRequest('Invalid chunk size line');
                }
                if (\strlen($m[1]) > self::MAX_SIZE_DIGITS) {
                    throw HttpError::badRequest('Chunk size line too long');
                }
                $this->extensionBytes += \strlen($m[2]);
                if ($this->extensionBytes > $this->limits->maxChunkExtBytes) {
                    throw HttpError::badRequest('Chunk extensions too long');
                }
                $digits = ltrim($m[1], '0');
                if (\strlen($digits) > 15 || \strlen($this->body) + hexdec($digits === '' ? '0' : $digits) > $this->limits->maxBodyBytes) {
                    throw HttpError::bodyTooLarge($this->limits->maxBodyBytes);
                }
                if ($digits === '') {
                    // Last chunk. Leave the offset on its CRLF: the trailer section then has the
                    // HeaderBlock form "\r\nName: value..." and ends at the next CRLFCRLF.
                    $offset = $eol;
                    $this->state = self::TRAILERS;
                } else {
                    $this->remaining = (int) hexdec($digits);
                    $offset = $eol + 2;
                    $this->state = self::DATA;
                    continue;
                }
            }

            // self::TRAILERS: same ranking as a head (see Syntax::checkHead()).
            $end = strpos($buffer, "\r\n\r\n", $offset);
            $max = $this->limits->maxHeaderBytes;
            if ($end === false) {
                // The terminator may already be partly here (up to 3 bytes).
                $size = $length - $offset;
                if (Syntax::hasBareLf($buffer, $offset, min($size, $max + 3))) {
                    throw Syntax::bareLf();
                }
                if ($size - 3 > $max) {
                    throw HttpError::headerTooLarge($max);
                }
                return false;
            }
            if ($end - $offset > $max) {
                if (Syntax::hasBareLf($buffer, $offset, $max + 3)) {
                    throw Syntax::bareLf();
                }
                throw HttpError::headerTooLarge($max);
            }
            $block = substr($buffer, $offset, $end - $offset);
            if ($block !== '' && (preg_match($this->trailerPattern, $block) !== 1 || str_contains($block, "\0"))) {
                throw Syntax::diagnoseFields(explode("\r\n", substr($block, 2)), $this->limits->maxHeaderCount);
            }
            $this->trailerBlock = $block;
            $offset = $end + 4;
            return true;
        }
    }

    public function body(): string
    {
        return $this->body;
    }

    /** Trailer fields in HeaderBlock form; "" when there were none. */
    public function trailerBlock(): string
    {
        return $this->trailerBlock;
    }

    public function bodyBytes(): int
    {
        return \strlen($this->body);
    }
}
