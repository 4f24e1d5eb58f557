<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Pool;

use Weft\Pool\BrokenConnection;

final class FakeBroken extends \RuntimeException implements BrokenConnection
{
    public function __construct(private readonly bool $safeToRetry, string $message = 'connection broke')
    {
        parent::__construct($message);
    }

    public function isSafeToRetry(): bool
    {
        return $this->safeToRetry;
    }
}
