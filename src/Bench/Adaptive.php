<?php

declare(strict_types=1);

namespace Weft\Bench;

/**
 * A scenario whose matrix depends on what it measures: it starts with a few rows, and once they have run
 * it may add more (the next concurrency step of a configuration whose throughput still rises, more
 * workers when the CPU stayed idle). The Runner calls next() until it returns no row.
 */
interface Adaptive extends Scenario
{
    /**
     * @param list<Row> $rows every row of the scenario so far (of this build), in the order they ran
     * @return list<Row> new rows to run (pending), or [] when the sweep is complete
     */
    public function next(array $rows, Environment $env): array;
}
