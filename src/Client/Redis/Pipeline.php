<?php

declare(strict_types=1);

namespace Weft\Client\Redis;

use Weft\Client\Redis\Internal\Queue;

/**
 * Given to the closure of pipeline(): each helper (or command()) queues a command and returns null; the
 * replies come back, in order, as the array pipeline() returns.
 */
final class Pipeline implements \Countable
{
    use Commands;
    use Queue;
}
