<?php

declare(strict_types=1);

namespace Weft\Bench;

/**
 * A checkout of Weft whose servers a run starts: the baseline of `--baseline REF`, side by side with this
 * checkout. Rows of a baseline build carry `build => label`; rows of this checkout carry `build => this`.
 */
final class Build
{
    public const THIS = 'this';

    /** @param list<string> $notes how it was prepared (commit, composer, extension), for the report */
    public function __construct(
        public readonly string $label,
        public readonly string $root,
        public readonly ?string $commit,
        public readonly array $notes = [],
    ) {
    }

    /** @return array<string, mixed> */
    public function toArray(): array
    {
        return ['label' => $this->label, 'root' => $this->root, 'commit' => $this->commit, 'notes' => $this->notes];
    }
}
