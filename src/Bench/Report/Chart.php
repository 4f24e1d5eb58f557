<?php

declare(strict_types=1);

namespace Weft\Bench\Report;

/** What one chart shows: a metric of the rows against one parameter, one line per series. */
final class Chart
{
    /** One line per series: for a parameter swept over several values, where the shape matters. */
    public const LINES = 'lines';
    /**
     * Side-by-side bars per x value: for few x values and series close to each other, which as lines
     * would lie on top of one another.
     */
    public const BARS = 'bars';

    /** @param list<string> $series the parameters whose values name a line (e.g. mode, workers) */
    public function __construct(
        public readonly string $file,
        public readonly string $title,
        public readonly string $xParam,
        public readonly string $xLabel,
        public readonly string $metric,
        public readonly string $yLabel,
        public readonly array $series,
        public readonly string $kind = self::LINES,
    ) {
    }

    /** @param list<string> $series */
    public function withSeries(array $series): self
    {
        return new self($this->file, $this->title, $this->xParam, $this->xLabel, $this->metric, $this->yLabel, $series, $this->kind);
    }
}
