<?php

declare(strict_types=1);

namespace Weft\Bench;

use Weft\Bench\Report\Format;

/**
 * The live progress line on stderr: scenario, row i of n, total done, elapsed time and an ETA that
 * corrects the rows' own estimates by how long the finished rows really took.
 */
final class Progress
{
    private readonly bool $tty;
    private float $estimatedDone = 0.0;
    private float $actualDone = 0.0;
    private bool $dirty = false;

    /** @param resource|null $stream */
    public function __construct(private mixed $stream = null, private readonly float $startedAt = 0.0)
    {
        $this->stream ??= \STDERR;
        $this->tty = \function_exists('posix_isatty') && @\posix_isatty($this->stream);
    }

    public function row(string $scenario, int $index, int $count, Row $row, int $done, int $total, float $remainingEstimate): void
    {
        $elapsed = \microtime(true) - $this->startedAt;
        $factor = $this->estimatedDone > 5 ? $this->actualDone / $this->estimatedDone : 1.0;
        $line = \sprintf(
            '[%s %d/%d] %s — %d/%d rows, elapsed %s, ETA %s',
            $scenario, $index, $count, $row->label(), $done, $total, Format::seconds($elapsed), Format::seconds($remainingEstimate * $factor),
        );
        $this->write($line);
    }

    public function finished(Row $row, float $estimate): void
    {
        $this->estimatedDone += $estimate;
        $this->actualDone += $row->seconds;
        if ($row->status === Row::FAILED) {
            $this->message("  {$row->scenario} {$row->label()}: failed: {$row->reason}");
        }
    }

    public function message(string $text): void
    {
        if ($this->tty && $this->dirty) {
            \fwrite($this->stream, "\r\033[K");
            $this->dirty = false;
        }
        \fwrite($this->stream, $text . "\n");
    }

    public function done(): void
    {
        if ($this->tty && $this->dirty) {
            \fwrite($this->stream, "\r\033[K");
            $this->dirty = false;
        }
    }

    private function write(string $line): void
    {
        if ($this->tty) {
            $width = (int) (\getenv('COLUMNS') ?: 160);
            \fwrite($this->stream, "\r\033[K" . \mb_strimwidth($line, 0, \max(40, $width - 1)));
            $this->dirty = true;
            return;
        }
        \fwrite($this->stream, $line . "\n");
    }
}
