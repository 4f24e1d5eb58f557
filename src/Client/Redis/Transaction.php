<?php

declare(strict_types=1);

namespace Weft\Client\Redis;

use Weft\Client\Redis\Internal\Queue;

/**
 * Given to the closure of transaction(): each helper (or command()) queues a command between MULTI and
 * EXEC and returns null; the results come back, in order, as the array transaction() returns.
 */
final class Transaction implements \Countable
{
    use Commands;
    use Queue;
}
