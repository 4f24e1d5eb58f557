<?php

declare(strict_types=1);

namespace App;

final class Counter
{
    private int $count = 0;

    public function increment(): int
    {
        return ++$this->count;
    }
}
