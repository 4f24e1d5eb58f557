<?php

declare(strict_types=1);

namespace Weft\Bench\Report;

/** How figures are written in tables and findings. "—" stands for "not measured". */
final class Format
{
    public const NONE = '—';

    /** Requests per second: three significant figures or so (12,345 / 123.4 / 1.23). */
    public static function rate(?float $value): string
    {
        return self::threeFigures($value);
    }

    /** Milliseconds, written as rates are. */
    public static function ms(?float $value): string
    {
        return self::threeFigures($value);
    }

    public static function bytes(int|float|null $bytes): string
    {
        if ($bytes === null) {
            return self::NONE;
        }
        return match (true) {
            $bytes >= 1024 ** 3 => \sprintf('%.2f GB', $bytes / 1024 ** 3),
            $bytes >= 1024 ** 2 => \sprintf('%.1f MB', $bytes / 1024 ** 2),
            default => \sprintf('%d KB', (int) \round($bytes / 1024)),
        };
    }

    public static function pct(?float $value): string
    {
        return $value === null ? self::NONE : \number_format($value, $value >= 100 ? 0 : 1);
    }

    public static function number(?float $value, int $decimals = 1): string
    {
        return $value === null ? self::NONE : \number_format($value, $decimals, '.', ',');
    }

    /** "+12%" / "-38%": the change from $from to $to. */
    public static function change(float $from, float $to): string
    {
        if ($from == 0.0) {
            return 'n/a';
        }
        $change = ($to - $from) / $from * 100;
        return ($change >= 0 ? '+' : '') . \number_format($change, 0) . '%';
    }

    /**
     * A ratio judged against $bound, to two decimals unless they would round it onto the other side
     * (0.9457 against 0.95 is written 0.946, not 0.95, where it fails): the figure shown agrees with
     * the verdict next to it.
     */
    public static function ratio(float $ratio, float $bound): string
    {
        for ($decimals = 2; $decimals < 6; $decimals++) {
            if (\round($ratio, $decimals) >= $bound === $ratio >= $bound) {
                break;
            }
        }
        return \number_format($ratio, $decimals);
    }

    /** "3.2x" */
    public static function times(float $ratio): string
    {
        return \number_format($ratio, $ratio >= 10 ? 0 : ($ratio >= 2 ? 1 : 2)) . 'x';
    }

    /** @param array<string, int>|null $errors */
    public static function errors(?array $errors): string
    {
        if ($errors === null) {
            return self::NONE;
        }
        $parts = [];
        foreach ($errors as $kind => $count) {
            if ($count > 0) {
                $parts[] = "$kind " . \number_format($count);
            }
        }
        return $parts === [] ? '0' : \implode(', ', $parts);
    }

    public static function seconds(float $seconds): string
    {
        $seconds = (int) \round($seconds);
        return \sprintf('%d:%02d', \intdiv($seconds, 60), $seconds % 60);
    }

    /** A cell must not break the Markdown table it sits in. */
    public static function cell(string $text): string
    {
        return \str_replace(['|', "\n", "\r"], ['\\|', ' ', ''], $text);
    }

    private static function threeFigures(?float $value): string
    {
        if ($value === null) {
            return self::NONE;
        }
        return match (true) {
            $value >= 100 => \number_format($value, 0, '.', ','),
            $value >= 10 => \number_format($value, 1, '.', ','),
            default => \number_format($value, 2, '.', ','),
        };
    }
}
