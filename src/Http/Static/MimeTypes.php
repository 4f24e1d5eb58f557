<?php

declare(strict_types=1);

namespace Weft\Http\Static;

/**
 * File extension => Content-Type. A table of our own for the types a web root holds, so the answer
 * does not depend on what the host has installed; anything else is looked up in /etc/mime.types
 * (Debian's media-types package, when present) and finally falls back to application/octet-stream,
 * which browsers download rather than sniff.
 *
 * Textual types carry "charset=utf-8": without it browsers guess the encoding of text/plain and CSS.
 */
final class MimeTypes
{
    public const DEFAULT = 'application/octet-stream';

    private const TABLE = [
        'html' => 'text/html; charset=utf-8', 'htm' => 'text/html; charset=utf-8',
        'css' => 'text/css; charset=utf-8', 'js' => 'text/javascript; charset=utf-8',
        'mjs' => 'text/javascript; charset=utf-8', 'json' => 'application/json',
        'map' => 'application/json', 'webmanifest' => 'application/manifest+json',
        'txt' => 'text/plain; charset=utf-8', 'md' => 'text/markdown; charset=utf-8',
        'csv' => 'text/csv; charset=utf-8', 'xml' => 'application/xml', 'rss' => 'application/rss+xml',
        'atom' => 'application/atom+xml', 'svg' => 'image/svg+xml', 'svgz' => 'image/svg+xml',
        'png' => 'image/png', 'jpg' => 'image/jpeg', 'jpeg' => 'image/jpeg', 'gif' => 'image/gif',
        'webp' => 'image/webp', 'avif' => 'image/avif', 'ico' => 'image/vnd.microsoft.icon',
        'bmp' => 'image/bmp', 'tif' => 'image/tiff', 'tiff' => 'image/tiff',
        'woff' => 'font/woff', 'woff2' => 'font/woff2', 'ttf' => 'font/ttf', 'otf' => 'font/otf',
        'eot' => 'application/vnd.ms-fontobject',
        'mp4' => 'video/mp4', 'webm' => 'video/webm', 'ogv' => 'video/ogg', 'mov' => 'video/quicktime',
        'mp3' => 'audio/mpeg', 'ogg' => 'audio/ogg', 'oga' => 'audio/ogg', 'wav' => 'audio/wav',
        'flac' => 'audio/flac', 'm4a' => 'audio/mp4', 'aac' => 'audio/aac', 'opus' => 'audio/ogg',
        'pdf' => 'application/pdf', 'wasm' => 'application/wasm', 'zip' => 'application/zip',
        'gz' => 'application/gzip', 'tgz' => 'application/gzip', 'bz2' => 'application/x-bzip2',
        'xz' => 'application/x-xz', 'zst' => 'application/zstd', '7z' => 'application/x-7z-compressed',
        'rar' => 'application/vnd.rar', 'tar' => 'application/x-tar',
        'doc' => 'application/msword', 'xls' => 'application/vnd.ms-excel',
        'docx' => 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        'xlsx' => 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        'pptx' => 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
        'odt' => 'application/vnd.oasis.opendocument.text', 'epub' => 'application/epub+zip',
        'ics' => 'text/calendar; charset=utf-8', 'vtt' => 'text/vtt; charset=utf-8',
        'yaml' => 'application/yaml', 'yml' => 'application/yaml', 'toml' => 'application/toml',
        'jsonld' => 'application/ld+json', 'xhtml' => 'application/xhtml+xml',
    ];

    /** @var array<string, string>|null extension => type, from the system file; read when first needed */
    private ?array $system = null;

    /** @param array<string, string> $extra extension (lower case, no dot) => type; wins over the table */
    public function __construct(private readonly array $extra = [], private readonly string $systemFile = '/etc/mime.types')
    {
    }

    public function forPath(string $path): string
    {
        $dot = \strrpos($path, '.');
        $slash = \strrpos($path, '/');
        if ($dot === false || ($slash !== false && $dot < $slash)) {
            return self::DEFAULT;
        }
        $extension = \strtolower(\substr($path, $dot + 1));
        return $this->extra[$extension] ?? self::TABLE[$extension] ?? $this->system()[$extension] ?? self::DEFAULT;
    }

    /** @return array<string, string> */
    private function system(): array
    {
        if ($this->system !== null) {
            return $this->system;
        }
        $this->system = [];
        $file = $this->systemFile;
        $lines = \is_readable($file) ? @\file($file, \FILE_IGNORE_NEW_LINES | \FILE_SKIP_EMPTY_LINES) : false;
        foreach ($lines ?: [] as $line) {
            if ($line[0] === '#') {
                continue;
            }
            $fields = \preg_split('/\s+/', \trim($line)) ?: [];
            $type = \array_shift($fields);
            if ($type === null || \preg_match('#\A[a-z0-9.+-]+/[a-z0-9.+-]+\z#i', $type) !== 1) {
                continue;
            }
            foreach ($fields as $extension) {
                $this->system[\strtolower($extension)] ??= $type;
            }
        }
        return $this->system;
    }
}
