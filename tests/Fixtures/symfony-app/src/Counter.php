<?php

declare(strict_types=1);

namespace App;

use Symfony\Contracts\Service\ResetInterface;

/**
 * Per-request state done right: a ResetInterface service, which autoconfiguration tags kernel.reset,
 * so Symfony zeroes it between requests.
 */
final class Counter implements ResetInterface
{
    private int $count = 0;

    public function increment(): int
    {
        return ++$this->count;
    }

    public function reset(): void
    {
        $this->count = 0;
    }
}
