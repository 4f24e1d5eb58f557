<?php

declare(strict_types=1);

namespace Weft\Http\Static;

/**
 * How StaticFiles serves a document root. Immutable; the root is resolved (realpath) once, here, so
 * a missing or unreadable root is an error at start-up rather than a 404 on every request.
 */
final class StaticOptions
{
    public const DEFAULT_INDEX = 'index.html';
    /** Files up to this size are read in one call and sent as a string body (one write with the head). */
    public const DEFAULT_BUFFER_LIMIT = 64 * 1024;
    /** Larger files are streamed in chunks of this size: the memory a transfer holds, whatever the file's size. */
    public const DEFAULT_CHUNK_SIZE = 256 * 1024;
    /**
     * The share of chunk sizes: with more transfers in flight than budget / chunk size, each reads
     * smaller chunks (down to MIN_CHUNK_SIZE), so that many transfers each get their turn. What they
     * hold together waiting on full sockets is bounded by the server's output budget per worker
     * (Weft\Server\OutputBudget), which suspends a transfer before it reads its next chunk.
     */
    public const DEFAULT_STREAM_BUDGET = 64 * 1024 * 1024;
    public const MIN_CHUNK_SIZE = 16 * 1024;

    public readonly string $root;

    /**
     * @param string $root the document root; must be a readable directory
     * @param ?string $index file served for a directory ("/docs/" serves "/docs/index.html"); null: none
     * @param bool $followSymlinks serve files whose real path lies outside the root (a symlink out of it)
     * @param bool $dotfiles serve names starting with "." (".env", ".git/config"); hidden by default
     * @param array<string, string> $mimeTypes extension (no dot) => Content-Type, overriding the built-in table
     * @param int $streamBudget bytes all streamed transfers of the worker hold at once (see DEFAULT_STREAM_BUDGET)
     */
    public function __construct(
        string $root,
        public readonly ?string $index = self::DEFAULT_INDEX,
        public readonly bool $followSymlinks = false,
        public readonly bool $dotfiles = false,
        public readonly int $bufferLimit = self::DEFAULT_BUFFER_LIMIT,
        public readonly int $chunkSize = self::DEFAULT_CHUNK_SIZE,
        public readonly array $mimeTypes = [],
        public readonly int $streamBudget = self::DEFAULT_STREAM_BUDGET,
    ) {
        $real = \realpath($root);
        if ($real === false || !\is_dir($real)) {
            throw new \InvalidArgumentException("Static root '$root' is not a directory");
        }
        if (!\is_readable($real) || !\is_executable($real)) {
            throw new \InvalidArgumentException("Static root '$root' is not readable");
        }
        if ($index !== null && ($index === '' || \strpbrk($index, "/\\\0") !== false || $index === '.' || $index === '..')) {
            throw new \InvalidArgumentException("Index file name '$index' must be a plain file name");
        }
        if ($bufferLimit < 0 || $chunkSize < 1 || $streamBudget < 1) {
            throw new \InvalidArgumentException('bufferLimit must be >= 0, chunkSize and streamBudget >= 1');
        }
        $this->root = $real;
    }
}
