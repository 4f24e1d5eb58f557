<?php

declare(strict_types=1);

namespace Weft\Http\Compression;

use Weft\Http\Message\BodyWriter;
use Weft\Http\Server\BodyLengthMismatch;

/**
 * @internal Deflates a streamed body on its way to the real writer. Every write() ends with a sync
 * flush, so the client can decode everything written so far (at a small cost in ratio for tiny writes).
 */
final class GzipBodyWriter implements BodyWriter
{
    private readonly \DeflateContext $context;
    private int $written = 0;

    /**
     * @param int|null $length the Content-Length the application declared for the identity bytes: the
     *        gzip variant goes chunked, but a producer that writes more or fewer than it promised is
     *        still a broken response (cut after the promised bytes, never finished), as without gzip
     */
    public function __construct(private readonly BodyWriter $out, int $level, private readonly ?int $length = null)
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
        $excess = false;
        if ($this->length !== null && $this->written + \strlen($chunk) > $this->length) {
            $chunk = \substr($chunk, 0, $this->length - $this->written);
            $excess = true;
        }
        $this->written += \strlen($chunk);
        if ($excess) {
            if ($chunk !== '') {
                $this->deflate($chunk);
            }
            throw BodyLengthMismatch::tooLong($this->length);
        }
        $this->deflate($chunk);
    }

    private function deflate(string &$chunk): void
    {
        $deflated = \deflate_add($this->context, $chunk, \ZLIB_SYNC_FLUSH);
        if ($deflated === false) {
            throw new \RuntimeException('deflate_add failed');
        }
        // Neither the input nor the output is kept here while the writer below waits for room: a
        // connection closed meanwhile frees its queue at once (see HttpBodyWriter::write()).
        $chunk = '';
        $this->out->write(self::handOver($deflated));
    }

    /** The string in $bytes, which is left empty: passed on as a temporary, its callee holds the only reference. */
    private static function handOver(string &$bytes): string
    {
        $taken = $bytes;
        $bytes = '';
        return $taken;
    }

    /** @throws BodyLengthMismatch when fewer bytes than declared were written (the body is left unfinished) */
    public function finish(): void
    {
        if ($this->length !== null && $this->written < $this->length) {
            throw BodyLengthMismatch::tooShort($this->length, $this->written);
        }
        $deflated = \deflate_add($this->context, '', \ZLIB_FINISH);
        if ($deflated === false) {
            throw new \RuntimeException('deflate_add failed');
        }
        $this->out->write($deflated);
    }
}
