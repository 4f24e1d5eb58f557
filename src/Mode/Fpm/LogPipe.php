<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

use Weft\Server\Logger;
use Weft\Socket\LineSplitter;

/**
 * The fpm-mode log channels: FIFOs in the runtime folder that php-fpm's workers write to, read by the
 * supervisor. One carries the front controller's records (escaped, one per line, passed on as they
 * are); the other PHP's own error_log() and warnings (the pool's `error_log`) and php-fpm's log, each
 * line of which becomes a tagged record, so that no text a client can put in a warning passes for a
 * record of the server. It replaces php-fpm's "catch_workers_output", which holds worker output back
 * until its buffer fills or the worker exits and then keeps only the end of it: exception lines
 * arrived late and cut at the front.
 *
 * Records a FIFO write of up to PIPE_BUF (4096) bytes cannot interleave with another worker's.
 */
final class LogPipe
{
    private const ERROR_LOG_LINE = '/^\[\d{2}-[A-Za-z]{3}-\d{4} \d{2}:\d{2}:\d{2}[^\]]*\] (.*)$/s';
    /** php-fpm's own log line (its error_log, with --log-file): no time zone, a level. */
    private const FPM_LINE = '/^\[\d{2}-[A-Za-z]{3}-\d{4} \d{2}:\d{2}:\d{2}(?:\.\d+)?\] (DEBUG|NOTICE|WARNING|ERROR|ALERT): (.*)$/s';

    /** A longer line (with no line break for this long) is forwarded in pieces: the buffer stays bounded. */
    private const MAX_LINE = 65536;

    private string $buffer = '';
    private ?LineSplitter $lines = null;

    /**
     * @param resource $read
     * @param bool $records Weft's own records (passed on as they are), or PHP's and php-fpm's lines
     */
    private function __construct(public readonly string $path, private readonly mixed $read, private readonly bool $records)
    {
    }

    public static function create(string $path, bool $records = false): ?self
    {
        @\unlink($path);
        if (!\function_exists('posix_mkfifo') || !@\posix_mkfifo($path, 0600)) {
            return null;
        }
        // Read-write: opening never blocks, and the FIFO never reads as ended between writers.
        $read = @\fopen($path, 'r+');
        if ($read === false) {
            return null;
        }
        \stream_set_blocking($read, false);
        return new self($path, $read, $records);
    }

    /** @return resource */
    public function resource(): mixed
    {
        return $this->read;
    }

    /**
     * Forwards complete lines: on the records FIFO, Weft's own records (and their indented trace lines)
     * as they are; on the other, every line as a record of the fpm workers (or of php-fpm).
     *
     * @param resource $output
     */
    public function forward(Logger $logger, mixed $output): void
    {
        while (($chunk = @\fread($this->read, 65536)) !== false && $chunk !== '') {
            $this->buffer .= $chunk;
        }
        $this->lines ??= new LineSplitter(self::MAX_LINE);
        while (($line = $this->lines->takePiece($this->buffer)) !== null) {
            if ($line === '') {
                continue;
            }
            if ($this->records) {
                @\fwrite($output, $line . "\n");
            } elseif (\preg_match(self::FPM_LINE, $line, $m)) {
                $logger->logFor('php-fpm', 0, \strtolower($m[1]), $m[2]);
            } else {
                // A line of PHP's error_log, or the next line of a message that held a line break:
                // each is a record of its own, tagged, never passed on as it is.
                $message = \preg_match(self::ERROR_LOG_LINE, $line, $m) ? $m[1] : $line;
                $logger->logFor('fpm worker', 0, 'warning', 'stderr: ' . $message, ['stream' => 'stderr']);
            }
        }
    }

    public function close(): void
    {
        if (\is_resource($this->read)) {
            \fclose($this->read);
        }
        @\unlink($this->path);
    }
}
