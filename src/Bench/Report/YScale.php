<?php

declare(strict_types=1);

namespace Weft\Bench\Report;

/** The y axis of a chart: linear from zero to a round maximum, or logarithmic by decades. */
final class YScale
{
    private function __construct(public readonly bool $log, private readonly float $min, private readonly float $max)
    {
    }

    /** @param list<float> $values */
    public static function for(array $values): self
    {
        $max = \max($values);
        $positive = \array_filter($values, static fn (float $v) => $v > 0);
        $min = $positive === [] ? 0.0 : \min($positive);
        if ($min > 0 && $max / $min > 100) {
            return new self(true, 10 ** \floor(\log10($min)), 10 ** \ceil(\log10($max)));
        }
        return new self(false, 0.0, self::niceCeiling($max > 0 ? $max * 1.05 : 1.0));
    }

    /** Where a value sits, from 0 (bottom) to 1 (top). */
    public function position(float $value): float
    {
        if ($this->log) {
            $value = \max($value, $this->min);
            return (\log10($value) - \log10($this->min)) / (\log10($this->max) - \log10($this->min));
        }
        return $this->max > 0 ? \max(0.0, $value) / $this->max : 0.0;
    }

    /** @return list<float> */
    public function ticks(): array
    {
        $ticks = [];
        if ($this->log) {
            for ($v = $this->min; $v <= $this->max * 1.0001; $v *= 10) {
                $ticks[] = $v;
            }
            return $ticks;
        }
        $step = $this->max / 5;
        for ($i = 0; $i <= 5; $i++) {
            $ticks[] = $step * $i;
        }
        return $ticks;
    }

    /** The smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10 x 10^n at least $value: ticks at fifths stay round. */
    public static function niceCeiling(float $value): float
    {
        $exponent = 10 ** \floor(\log10($value));
        foreach ([1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10] as $m) {
            if ($m * $exponent >= $value) {
                return $m * $exponent;
            }
        }
        return 10 * $exponent;
    }
}
