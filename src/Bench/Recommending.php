<?php

declare(strict_types=1);

namespace Weft\Bench;

use Weft\Bench\Report\Recommendation;

/** A scenario that ends with advice computed from its rows, shown at the top of the report and on stdout. */
interface Recommending extends Scenario
{
    /** @param list<Row> $rows the rows of this build */
    public function recommendation(array $rows): Recommendation;
}
