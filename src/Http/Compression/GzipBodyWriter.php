<?php

declare(strict_types=1);

namespace Weft\Http\Compression;

use Weft\Coroutine\Scheduler;
use Weft\Http\Message\BodyWriter;
use Weft\Http\Server\BodyLengthMismatch;

/**
 * @internal Deflates a streamed body on its way to the real writer. Every write() ends with a sync
 * flush, so the client can decode everything written so far (at a small cost in ratio for tiny writes).
 *
 * Compressing is the one thing here that costs CPU without waiting: a file chunk of 256 KB takes
 * ~10 ms at level 6, and when the client takes every byte at once nothing else made the producer
 * wait, so a 4 MB text file held its worker's loop for ~170 ms at a time. So input is deflated in
 * slices of SLICE bytes, and once a slice leaves the loop unserved for YIELD_AFTER the writer gives
 * it a turn (in a coroutine; a producer driven from {main} or a loop callback cannot wait).
 */
final class GzipBodyWriter implements BodyWriter
{
    /** ~1.3 ms of deflate at level 6 for varied text on the machine this was measured on. */
    public const SLICE = 32 * 1024;
    /** Seconds of compressing after which the loop gets a turn. */
    public const YIELD_AFTER = 0.001;

    private readonly \DeflateContext $context;
    private int $written = 0;
    /** Nanoseconds spent deflating since the loop last had a turn from here. */
    private int $busy = 0;

    /**
     * @param int|null $length the Content-Length the application declared for the identity bytes: the
     *        gzip variant goes chunked, but a producer that writes more or fewer than it promised is
     *        still a broken response (cut after the promised bytes, never finished), as without gzip
     */
    public function __construct(
        private readonly BodyWriter $out,
        int $level,
        private readonly ?int $length = null,
        private readonly int $slice = self::SLICE,
    ) {
        $this->context = self::context($level);
    }

    /** @throws \RuntimeException when zlib cannot start a stream */
    public static function context(int $level): \DeflateContext
    {
        $context = \deflate_init(\ZLIB_ENCODING_GZIP, ['level' => $level]);
        if ($context === false) {
            throw new \RuntimeException('deflate_init failed');
        }
        return $context;
    }

    /**
     * The gzip encoding of a string body, deflated slice by slice with turns for the loop between
     * them (see the class comment): what a large application answer is compressed with.
     */
    public static function encode(string $body, int $level): string
    {
        $context = self::context($level);
        $out = '';
        $busy = 0;
        $length = \strlen($body);
        for ($offset = 0; $offset < $length; $offset += self::SLICE) {
            $last = $offset + self::SLICE >= $length;
            $out .= self::add($context, \substr($body, $offset, self::SLICE), $last ? \ZLIB_FINISH : \ZLIB_NO_FLUSH, $busy);
            if (!$last) {
                self::giveTurn($busy);
            }
        }
        return $length === 0 ? self::add($context, '', \ZLIB_FINISH, $busy) : $out;
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
        $length = \strlen($chunk);
        if ($length <= $this->slice) {
            $deflated = self::add($this->context, $chunk, \ZLIB_SYNC_FLUSH, $this->busy);
            // Neither the input nor the output is kept here while the writer below waits for room: a
            // connection closed meanwhile frees its queue at once (see HttpBodyWriter::write()).
            $chunk = '';
            $this->out->write(self::handOver($deflated));
            self::giveTurn($this->busy);
            return;
        }
        for ($offset = 0; $offset < $length; $offset += $this->slice) {
            $last = $offset + $this->slice >= $length;
            $deflated = self::add($this->context, \substr($chunk, $offset, $this->slice), $last ? \ZLIB_SYNC_FLUSH : \ZLIB_NO_FLUSH, $this->busy);
            if ($last) {
                $chunk = '';
            }
            if ($deflated !== '') {
                $this->out->write(self::handOver($deflated));
            }
            self::giveTurn($this->busy);
        }
    }

    /** @throws \RuntimeException */
    private static function add(\DeflateContext $context, string $data, int $flush, int &$busy): string
    {
        $start = \hrtime(true);
        $deflated = \deflate_add($context, $data, $flush);
        $busy += \hrtime(true) - $start;
        if ($deflated === false) {
            throw new \RuntimeException('deflate_add failed');
        }
        return $deflated;
    }

    /**
     * Lets the loop run (other connections' reads, timers, answers) once deflating has held it for
     * YIELD_AFTER since the last turn given here. Only the time spent in zlib counts: a write that
     * waited for room below has let the loop run anyway, which at worst gives one turn more than needed.
     */
    private static function giveTurn(int &$busy): void
    {
        if ($busy < self::YIELD_AFTER * 1e9 || Scheduler::get()->current === null) {
            return;
        }
        $busy = 0;
        \Weft\sleep(0.0);
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
        $this->out->write(self::add($this->context, '', \ZLIB_FINISH, $this->busy));
    }
}
