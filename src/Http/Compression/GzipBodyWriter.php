<?php

declare(strict_types=1);

namespace Weft\Http\Compression;

use Weft\Http\Message\BodyWriter;

/**
 * @internal Deflates a streamed body on its way to the real writer. Every write() ends with a sync
 * flush, so the client can decode everything written so far (at a small cost in ratio for tiny writes).
 */
final class GzipBodyWriter implements BodyWriter
{
    private readonly \DeflateContext $context;

    public function __construct(private readonly BodyWriter $out, int $level)
    {
        $context = \deflate_init(\ZLIB_ENCODING_GZIP, ['level' => $level]);
        if ($context === false) {
            throw new \RuntimeException('deflate_init failed');
        }
        $this->context = $context;
    }

    public function write(string $chunk): void
    {
        if ($chunk === '') {
            return;
        }
        $deflated = \deflate_add($this->context, $chunk, \ZLIB_SYNC_FLUSH);
        if ($deflated === false) {
            throw new \RuntimeException('deflate_add failed');
        }
        $this->out->write($deflated);
    }

    public function finish(): void
    {
        $deflated = \deflate_add($this->context, '', \ZLIB_FINISH);
        if ($deflated === false) {
            throw new \RuntimeException('deflate_add failed');
        }
        $this->out->write($deflated);
    }
}
