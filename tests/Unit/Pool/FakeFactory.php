<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Pool;

use Weft\Pool\Pool;
use Weft\Pool\PoolOptions;

/** Makes FakeConnections for a real Pool under test, with switches for failures and slow connects. */
final class FakeFactory
{
    /** @var list<FakeConnection> */
    public array $made = [];
    public int $attempts = 0;
    /** The next this many connects throw. */
    public int $failNext = 0;
    /** Seconds each connect takes (suspends in a coroutine). */
    public float $connectDelay = 0.0;

    public function pool(?PoolOptions $options = null, bool $withCheck = true, ?\Closure $reusable = null): Pool
    {
        return new Pool(
            $this->connect(...),
            static function (FakeConnection $c): void {
                $c->closed = true;
            },
            $withCheck ? static function (FakeConnection $c): bool {
                $c->checks++;
                return $c->healthy;
            } : null,
            $options,
            $reusable,
        );
    }

    public function connect(): FakeConnection
    {
        $this->attempts++;
        if ($this->connectDelay > 0) {
            \Weft\sleep($this->connectDelay);
        }
        if ($this->failNext > 0) {
            $this->failNext--;
            throw new \RuntimeException('Connection refused (fake)');
        }
        return $this->made[] = new FakeConnection(\count($this->made) + 1);
    }
}
