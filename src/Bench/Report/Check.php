<?php

declare(strict_types=1);

namespace Weft\Bench\Report;

/** One "must show" line of BENCH.md and whether the measured figures bear it out. */
final class Check
{
    /** @param bool|null $holds null: the figures needed to judge were not measured */
    public function __construct(
        public readonly string $claim,
        public readonly ?bool $holds,
        public readonly string $evidence,
    ) {
    }

    public static function unknown(string $claim, string $why): self
    {
        return new self($claim, null, $why);
    }

    public function verdict(): string
    {
        return match ($this->holds) {
            true => 'holds',
            false => 'does not hold',
            null => 'not evaluated',
        };
    }

    /** @return array<string, mixed> */
    public function toArray(): array
    {
        return ['claim' => $this->claim, 'holds' => $this->holds, 'verdict' => $this->verdict(), 'evidence' => $this->evidence];
    }
}
