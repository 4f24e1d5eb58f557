<?php

declare(strict_types=1);

namespace Weft\Pool;

/** How a Pool sizes and maintains itself. Immutable: each withX() returns a copy. */
final class PoolOptions
{
    public const DEFAULT_MIN = 0;
    public const DEFAULT_MAX = 10;
    public const DEFAULT_BORROW_TIMEOUT = 5.0;
    public const DEFAULT_IDLE_TIMEOUT = 60.0;
    public const DEFAULT_CHECK_AFTER_IDLE = 1.0;

    private function __construct(
        /** Connections kept open through idle eviction (created on first use, not up front). */
        public readonly int $min = self::DEFAULT_MIN,
        /** Connections open at most, in use, idle and being opened together. */
        public readonly int $max = self::DEFAULT_MAX,
        /** How long borrow() waits in a coroutine before it throws PoolExhausted. */
        public readonly float $borrowTimeout = self::DEFAULT_BORROW_TIMEOUT,
        /** Idle connections beyond $min are closed after this long unused. */
        public readonly float $idleTimeout = self::DEFAULT_IDLE_TIMEOUT,
        /** A connection idle longer than this is health-checked before it is handed out. */
        public readonly float $checkAfterIdle = self::DEFAULT_CHECK_AFTER_IDLE,
    ) {
    }

    public static function defaults(): self
    {
        return new self();
    }

    public function withMin(int $min): self
    {
        if ($min < 0) {
            throw new \InvalidArgumentException('The minimum pool size cannot be negative');
        }
        return new self($min, $this->max, $this->borrowTimeout, $this->idleTimeout, $this->checkAfterIdle);
    }

    public function withMax(int $max): self
    {
        if ($max < 1) {
            throw new \InvalidArgumentException('The maximum pool size must be at least 1');
        }
        return new self($this->min, $max, $this->borrowTimeout, $this->idleTimeout, $this->checkAfterIdle);
    }

    public function withBorrowTimeout(float $seconds): self
    {
        if ($seconds < 0) {
            throw new \InvalidArgumentException('The borrow timeout cannot be negative');
        }
        return new self($this->min, $this->max, $seconds, $this->idleTimeout, $this->checkAfterIdle);
    }

    public function withIdleTimeout(float $seconds): self
    {
        if ($seconds < 0) {
            throw new \InvalidArgumentException('The idle timeout cannot be negative');
        }
        return new self($this->min, $this->max, $this->borrowTimeout, $seconds, $this->checkAfterIdle);
    }

    public function withCheckAfterIdle(float $seconds): self
    {
        if ($seconds < 0) {
            throw new \InvalidArgumentException('The health-check idle threshold cannot be negative');
        }
        return new self($this->min, $this->max, $this->borrowTimeout, $this->idleTimeout, $seconds);
    }
}
