<?php

declare(strict_types=1);

namespace Weft\Client\Redis\Protocol;

/** Encodes commands as RESP arrays of blob strings, the one form a client sends. Pure. */
final class RespWriter
{
    /** @param array<int, string|int|float> $args */
    public static function command(array $args): string
    {
        $out = '*' . \count($args) . "\r\n";
        foreach ($args as $arg) {
            if (!\is_string($arg)) {
                $arg = \is_int($arg) ? (string) $arg : self::float($arg);
            }
            $out .= '$' . \strlen($arg) . "\r\n$arg\r\n";
        }
        return $out;
    }

    /** @param list<array<int, string|int|float>> $commands */
    public static function commands(array $commands): string
    {
        $out = '';
        foreach ($commands as $args) {
            $out .= self::command($args);
        }
        return $out;
    }

    /**
     * The shortest text that reads back as the same double ("0.1", not "0.10000000000000001"), and the
     * spellings Redis accepts for infinities.
     */
    public static function float(float $value): string
    {
        if (\is_nan($value)) {
            throw new \InvalidArgumentException('NaN cannot be sent to Redis');
        }
        if (\is_infinite($value)) {
            return $value > 0 ? '+inf' : '-inf';
        }
        $text = \var_export($value, true);
        return \str_ends_with($text, '.0') ? \substr($text, 0, -2) : $text;
    }
}
