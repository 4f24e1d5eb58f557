<?php

declare(strict_types=1);

namespace Weft\Http\Compression;

/** What Gzip compresses and how hard. Immutable. */
final class GzipOptions
{
    /** Below about a kilobyte the gzip header and the CPU cost more than the bytes saved. */
    public const DEFAULT_MIN_LENGTH = 1024;
    /** zlib's own default: most of the ratio of level 9 for a fraction of its CPU. */
    public const DEFAULT_LEVEL = 6;
    /** Media types (patterns as for fnmatch(), lower case, no parameters) worth compressing. */
    public const DEFAULT_TYPES = [
        'text/*', 'application/json', 'application/*+json', 'application/x-ndjson', 'application/javascript',
        'application/xml', 'application/*+xml', 'image/svg+xml', 'application/wasm', 'application/yaml',
        'application/toml', 'font/ttf', 'font/otf', 'application/vnd.ms-fontobject',
    ];
    /**
     * Already compressed: never worth a second pass, whatever the type list says (a list of "*\/*" or
     * "image/*" must not make Weft gzip JPEGs).
     */
    public const NEVER = [
        'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/heic', 'video/*', 'audio/*',
        'font/woff', 'font/woff2', 'application/zip', 'application/gzip', 'application/x-gzip',
        'application/x-bzip2', 'application/x-xz', 'application/zstd', 'application/x-7z-compressed',
        'application/vnd.rar', 'application/epub+zip', 'application/vnd.openxmlformats-*',
        'application/vnd.oasis.opendocument.*',
    ];

    /** @var list<string> */
    public readonly array $types;

    /** @param list<string> $types media type patterns, e.g. "text/*", "application/json" */
    public function __construct(
        public readonly int $minLength = self::DEFAULT_MIN_LENGTH,
        array $types = self::DEFAULT_TYPES,
        public readonly int $level = self::DEFAULT_LEVEL,
    ) {
        if ($minLength < 0) {
            throw new \InvalidArgumentException('minLength cannot be negative');
        }
        if ($level < 1 || $level > 9) {
            throw new \InvalidArgumentException("gzip level must be between 1 and 9, got $level");
        }
        $clean = [];
        foreach ($types as $type) {
            $type = \strtolower(\trim($type));
            if (\preg_match('#\A[a-z0-9.+*-]+/[a-z0-9.+*-]+\z#', $type) !== 1) {
                throw new \InvalidArgumentException("'$type' is not a media type pattern like text/* or application/json");
            }
            $clean[] = $type;
        }
        if ($clean === []) {
            throw new \InvalidArgumentException('The list of types to compress is empty');
        }
        $this->types = $clean;
    }

    /** Whether a Content-Type (parameters ignored) is one these options compress. */
    public function compresses(string $contentType): bool
    {
        $type = \strtolower(\trim(\explode(';', $contentType, 2)[0]));
        return self::matchesAny($type, $this->types) && !self::matchesAny($type, self::NEVER);
    }

    /** @param list<string> $patterns */
    private static function matchesAny(string $type, array $patterns): bool
    {
        foreach ($patterns as $pattern) {
            if ($pattern === $type || (\str_contains($pattern, '*') && \fnmatch($pattern, $type))) {
                return true;
            }
        }
        return false;
    }
}
