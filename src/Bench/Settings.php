<?php

declare(strict_types=1);

namespace Weft\Bench;

/**
 * What the user asked for: full or quick matrix, the time per row, and overrides of the matrix axes
 * (null: the scenario's own axis).
 */
final class Settings
{
    /**
     * @param list<int>|null $workers
     * @param list<int>|null $concurrency
     * @param list<string>|null $modes
     * @param list<string>|null $loops
     * @param list<string>|null $apps the application variants of a scenario (`--app`), null: its default
     * @param array{0: int, 1: int}|null $portRange the only ports servers may listen on (null: any free one)
     * @param ?string $baseline the --baseline REF as given, when the run compares two builds
     * @param list<string>|null $routes framework: the routes to run (`--routes`: hello, sleep, sql3), null: all
     * @param list<int>|null $instances framework: the coroutine rows' pool sizes (`--app-instances`), null: the scenario's
     */
    public function __construct(
        public readonly bool $quick = false,
        public readonly ?float $duration = null,
        public readonly ?array $workers = null,
        public readonly ?array $concurrency = null,
        public readonly ?array $modes = null,
        public readonly ?array $loops = null,
        public readonly bool $ab = false,
        public readonly bool $varied = false,
        public readonly ?array $apps = null,
        public readonly ?array $portRange = null,
        public readonly ?string $baseline = null,
        public readonly ?array $routes = null,
        public readonly ?array $instances = null,
    ) {
    }

    /** Seconds of load per row. */
    public function duration(): float
    {
        return $this->duration ?? ($this->quick ? 2.0 : 10.0);
    }

    /**
     * @template T
     * @param list<T> $full
     * @param list<T> $quick
     * @param list<T>|null $override
     * @return list<T>
     */
    public function axis(array $full, array $quick, ?array $override): array
    {
        return $override ?? ($this->quick ? $quick : $full);
    }

    /** @return array<string, mixed> */
    public function toArray(): array
    {
        return [
            'quick' => $this->quick,
            'duration_s' => $this->duration(),
            'workers' => $this->workers,
            'concurrency' => $this->concurrency,
            'modes' => $this->modes,
            'loops' => $this->loops,
            'ab' => $this->ab,
            'varied' => $this->varied,
            'apps' => $this->apps,
            'port_range' => $this->portRange,
            'baseline' => $this->baseline,
            'routes' => $this->routes,
            'app_instances' => $this->instances,
        ];
    }
}
