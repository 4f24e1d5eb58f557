<?php

declare(strict_types=1);

namespace Weft\Http\Parser;

/**
 * Size limits the parsers enforce, with defaults close to nginx's. Immutable: withX() returns a copy.
 */
final readonly class Limits
{
    /** Request line + headers + the blank line, like nginx's large_client_header_buffers (431). */
    public const DEFAULT_MAX_HEADER_BYTES = 8192;
    /** The request line alone, without its CRLF (414). */
    public const DEFAULT_MAX_TARGET_BYTES = 8192;
    /** Header fields in one head, and trailer fields in one chunked body (431). */
    public const DEFAULT_MAX_HEADER_COUNT = 100;
    /** Decoded body, by Content-Length or chunked (413); nginx's client_max_body_size is 1m. */
    public const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;
    /** Chunk extension bytes summed over one chunked body (400): extensions carry nothing we use. */
    public const DEFAULT_MAX_CHUNK_EXT_BYTES = 4096;

    public function __construct(
        public int $maxHeaderBytes = self::DEFAULT_MAX_HEADER_BYTES,
        public int $maxTargetBytes = self::DEFAULT_MAX_TARGET_BYTES,
        public int $maxHeaderCount = self::DEFAULT_MAX_HEADER_COUNT,
        public int $maxBodyBytes = self::DEFAULT_MAX_BODY_BYTES,
        public int $maxChunkExtBytes = self::DEFAULT_MAX_CHUNK_EXT_BYTES,
    ) {
        if ($maxHeaderBytes < 16 || $maxTargetBytes < 16) {
            throw new \InvalidArgumentException('Header and request-line limits must be at least 16 bytes');
        }
        // The count ends up as a regex quantifier, which PCRE caps at 65535.
        if ($maxHeaderCount < 0 || $maxHeaderCount > 65535) {
            throw new \InvalidArgumentException('maxHeaderCount must be between 0 and 65535');
        }
        if ($maxBodyBytes < 0 || $maxChunkExtBytes < 0) {
            throw new \InvalidArgumentException('Body and chunk extension limits cannot be negative');
        }
    }

    public function withMaxHeaderBytes(int $bytes): self
    {
        return new self($bytes, $this->maxTargetBytes, $this->maxHeaderCount, $this->maxBodyBytes, $this->maxChunkExtBytes);
    }

    public function withMaxTargetBytes(int $bytes): self
    {
        return new self($this->maxHeaderBytes, $bytes, $this->maxHeaderCount, $this->maxBodyBytes, $this->maxChunkExtBytes);
    }

    public function withMaxHeaderCount(int $count): self
    {
        return new self($this->maxHeaderBytes, $this->maxTargetBytes, $count, $this->maxBodyBytes, $this->maxChunkExtBytes);
    }

    public function withMaxBodyBytes(int $bytes): self
    {
        return new self($this->maxHeaderBytes, $this->maxTargetBytes, $this->maxHeaderCount, $bytes, $this->maxChunkExtBytes);
    }

    public function withMaxChunkExtBytes(int $bytes): self
    {
        return new self($this->maxHeaderBytes, $this->maxTargetBytes, $this->maxHeaderCount, $this->maxBodyBytes, $bytes);
    }
}
