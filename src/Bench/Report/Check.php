<?php

declare(strict_types=1);

namespace Weft\Bench\Report;

/** One "must show" line of docs/benchmarks.md and whether the measured figures bear it out. */
final class Check
{
    /**
     * @param bool|null $holds null: the figures needed to judge were not measured
     * @param list<string> $failing the rows (their labels) that make the claim fail, so a reader sees
     *        which ones without working it out from the evidence
     */
    public function __construct(
        public readonly string $claim,
        public readonly ?bool $holds,
        public readonly string $evidence,
        public readonly array $failing = [],
    ) {
    }

    /**
     * A claim every row must bear out: it holds when each does, and fails naming the rows that do not.
     *
     * @param list<\Weft\Bench\Row> $rows
     * @param \Closure(\Weft\Bench\Row): bool $passes
     * @param \Closure(\Weft\Bench\Row): string $label how a row is named in the verdict
     */
    public static function everyRow(string $claim, array $rows, \Closure $passes, string $evidence, ?\Closure $label = null): self
    {
        if ($rows === []) {
            return self::unknown($claim, 'no row to judge');
        }
        $failing = [];
        foreach ($rows as $row) {
            if (!$passes($row)) {
                $failing[] = $label !== null ? $label($row) : $row->label();
            }
        }
        return new self($claim, $failing === [], $evidence, $failing);
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
        return ['claim' => $this->claim, 'holds' => $this->holds, 'verdict' => $this->verdict(), 'evidence' => $this->evidence, 'failing' => $this->failing];
    }
}
