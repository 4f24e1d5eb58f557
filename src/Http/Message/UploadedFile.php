<?php

declare(strict_types=1);

namespace Weft\Http\Message;

/**
 * One file part of a multipart/form-data body, kept in memory: the body it came from is already
 * bounded by the parser's body limit, so there is nothing to gain from a temporary file.
 */
final readonly class UploadedFile
{
    public int $size;

    public function __construct(
        public string $clientFilename,
        public string $clientMediaType,
        public string $contents,
    ) {
        $this->size = \strlen($contents);
    }

    /** A browser sends an empty, nameless file part when the user chose no file. */
    public function isEmpty(): bool
    {
        return $this->clientFilename === '' && $this->size === 0;
    }
}
