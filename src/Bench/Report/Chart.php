<?php

declare(strict_types=1);

namespace Weft\Bench\Report;

/** What one chart shows: a metric of the rows against one parameter, one line per series. */
final class Chart
{
    /** @param list<string> $series the parameters whose values name a line (e.g. mode, workers) */
    public function __construct(
        public readonly string $file,
        public readonly string $title,
        public readonly string $xParam,
        public readonly string $xLabel,
        public readonly string $metric,
        public readonly string $yLabel,
        public readonly array $series,
    ) {
    }
}
