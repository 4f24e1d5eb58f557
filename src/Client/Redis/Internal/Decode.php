<?php

declare(strict_types=1);

namespace Weft\Client\Redis\Internal;

use Weft\Client\Redis\Protocol\RespReader;

/**
 * Turns a raw reply into what a typed helper returns. Named by strings rather than closures so that a
 * command costs no closure allocation.
 *
 * @internal
 */
final class Decode
{
    public const OK = 'ok';
    public const BOOL = 'bool';
    public const FLOAT = 'float';
    public const HASH = 'hash';
    public const SCORES = 'scores';
    public const VOID = 'void';

    public static function apply(string $as, mixed $reply, int $protocol): mixed
    {
        return match ($as) {
            self::OK => $reply === 'OK' || $reply === true,
            self::BOOL => (bool) $reply,
            self::FLOAT => $reply === null || \is_float($reply) ? $reply : RespReader::double((string) $reply),
            self::HASH => $protocol === 3 ? $reply : self::pairs($reply),
            self::SCORES => self::scores($reply, $protocol),
            self::VOID => null,
            default => throw new \LogicException("Unknown reply decoder '$as'"),
        };
    }

    /**
     * RESP2 field, value, field, value, ... as an array keyed by field.
     *
     * @param list<mixed> $flat
     * @return array<array-key, mixed>
     */
    public static function pairs(array $flat): array
    {
        $map = [];
        for ($i = 0, $n = \count($flat); $i < $n; $i += 2) {
            $map[$flat[$i]] = $flat[$i + 1];
        }
        return $map;
    }

    /**
     * ZRANGE ... WITHSCORES: RESP2 member, "score", ...; RESP3 [member, score] pairs. Both -> member => float.
     *
     * @return array<array-key, float>
     */
    private static function scores(array $reply, int $protocol): array
    {
        $scores = [];
        if ($protocol === 3 && ($reply === [] || \is_array($reply[0]))) {
            foreach ($reply as [$member, $score]) {
                $scores[$member] = \is_float($score) ? $score : RespReader::double((string) $score);
            }
            return $scores;
        }
        for ($i = 0, $n = \count($reply); $i < $n; $i += 2) {
            $scores[$reply[$i]] = RespReader::double((string) $reply[$i + 1]);
        }
        return $scores;
    }
}
