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
    /**
     * Request methods accepted: the IANA HTTP Method Registry, plus the extension methods llhttp knows
     * for HTTP (PURGE, M-SEARCH, NOTIFY, SUBSCRIBE, UNSUBSCRIBE, SOURCE). An upper-case token outside
     * the list gets 501, anything else (lower case, "helloGET" from a body longer than it said) 400.
     */
    public const DEFAULT_METHODS = [
        'ACL', 'BASELINE-CONTROL', 'BIND', 'CHECKIN', 'CHECKOUT', 'CONNECT', 'COPY', 'DELETE', 'GET', 'HEAD',
        'LABEL', 'LINK', 'LOCK', 'M-SEARCH', 'MERGE', 'MKACTIVITY', 'MKCALENDAR', 'MKCOL', 'MKREDIRECTREF',
        'MKWORKSPACE', 'MOVE', 'NOTIFY', 'OPTIONS', 'ORDERPATCH', 'PATCH', 'POST', 'PROPFIND', 'PROPPATCH',
        'PURGE', 'PUT', 'QUERY', 'REBIND', 'REPORT', 'SEARCH', 'SOURCE', 'SUBSCRIBE', 'TRACE', 'UNBIND',
        'UNCHECKOUT', 'UNLINK', 'UNLOCK', 'UNSUBSCRIBE', 'UPDATE', 'UPDATEREDIRECTREF', 'VERSION-CONTROL',
    ];

    /** @var array<string, true> the accepted methods, as keys */
    public array $methodSet;

    public function __construct(
        public int $maxHeaderBytes = self::DEFAULT_MAX_HEADER_BYTES,
        public int $maxTargetBytes = self::DEFAULT_MAX_TARGET_BYTES,
        public int $maxHeaderCount = self::DEFAULT_MAX_HEADER_COUNT,
        public int $maxBodyBytes = self::DEFAULT_MAX_BODY_BYTES,
        public int $maxChunkExtBytes = self::DEFAULT_MAX_CHUNK_EXT_BYTES,
        /** @var list<string> */
        public array $methods = self::DEFAULT_METHODS,
    ) {
        foreach ($methods as $method) {
            if (!\is_string($method) || \preg_match('/\A[!#$%&\'*+\-.^_`|~0-9A-Z]++\z/', $method) !== 1) {
                throw new \InvalidArgumentException(\sprintf('A method must be an upper-case token, got "%s"', \is_string($method) ? \addcslashes($method, "\0..\37\177..\377") : \get_debug_type($method)));
            }
        }
        $this->methodSet = \array_fill_keys($methods, true);
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
        return new self($bytes, $this->maxTargetBytes, $this->maxHeaderCount, $this->maxBodyBytes, $this->maxChunkExtBytes, $this->methods);
    }

    public function withMaxTargetBytes(int $bytes): self
    {
        return new self($this->maxHeaderBytes, $bytes, $this->maxHeaderCount, $this->maxBodyBytes, $this->maxChunkExtBytes, $this->methods);
    }

    public function withMaxHeaderCount(int $count): self
    {
        return new self($this->maxHeaderBytes, $this->maxTargetBytes, $count, $this->maxBodyBytes, $this->maxChunkExtBytes, $this->methods);
    }

    public function withMaxBodyBytes(int $bytes): self
    {
        return new self($this->maxHeaderBytes, $this->maxTargetBytes, $this->maxHeaderCount, $bytes, $this->maxChunkExtBytes, $this->methods);
    }

    public function withMaxChunkExtBytes(int $bytes): self
    {
        return new self($this->maxHeaderBytes, $this->maxTargetBytes, $this->maxHeaderCount, $this->maxBodyBytes, $bytes, $this->methods);
    }

    /** @param list<string> $methods accepted besides DEFAULT_METHODS */
    public function withExtraMethods(array $methods): self
    {
        return new self($this->maxHeaderBytes, $this->maxTargetBytes, $this->maxHeaderCount, $this->maxBodyBytes, $this->maxChunkExtBytes, \array_values(\array_unique(\array_merge($this->methods, $methods))));
    }
}
