<?php

declare(strict_types=1);

namespace Weft\Http\Static;

/** The Range header of a GET, as far as a file server needs it (RFC 9110 section 14). */
final class ByteRange
{
    /**
     * More ranges than this in one request are not worth a multipart answer (RFC 9110 section 14.2
     * lets a server ignore a set of many small ranges): the whole file is sent instead.
     */
    public const MAX_RANGES = 32;

    /**
     * One range only (a request for several is ignored here; see parseSet()).
     *
     * @return array{0: int, 1: int}|false|null [offset, length] of the one satisfiable range; false when
     *     unsatisfiable (416); null when the header is to be ignored (the whole file, 200): not a
     *     bytes range, malformed, or several ranges
     */
    public static function parse(string $header, int $size): array|false|null
    {
        $set = self::parseSet($header, $size);
        if (\is_array($set) && \count($set) > 1) {
            return null;
        }
        return \is_array($set) ? $set[0] : $set;
    }

    /**
     * Every satisfiable range of the header, in the order asked.
     *
     * @return non-empty-list<array{0: int, 1: int}>|false|null [offset, length] per satisfiable range;
     *     false when none is satisfiable (416); null when the header is to be ignored (the whole file,
     *     200): not a bytes range, a malformed element, more than MAX_RANGES, or ranges that together
     *     ask for more than the file (overlaps: answering them would send the file several times over)
     */
    public static function parseSet(string $header, int $size): array|false|null
    {
        if (\preg_match('/\A\s*bytes\s*=\s*(.*)\z/is', $header, $m) !== 1) {
            return null;
        }
        // Empty list elements are allowed ("bytes=0-1,,"): drop them before counting.
        $specs = \array_values(\array_filter(\array_map('trim', \explode(',', $m[1])), static fn (string $s): bool => $s !== ''));
        if ($specs === [] || \count($specs) > self::MAX_RANGES) {
            return null;
        }
        $ranges = [];
        $total = 0;
        foreach ($specs as $spec) {
            $range = self::one($spec, $size);
            if ($range === null) {
                return null;   // one malformed element makes the whole header invalid
            }
            if ($range !== false) {
                $ranges[] = $range;
                $total += $range[1];
            }
        }
        if ($ranges === []) {
            return false;
        }
        return \count($ranges) > 1 && $total > $size ? null : $ranges;
    }

    /** @return array{0: int, 1: int}|false|null one range spec: [offset, length], false (unsatisfiable), null (malformed) */
    private static function one(string $spec, int $size): array|false|null
    {
        if (\preg_match('/\A(\d*)-(\d*)\z/', $spec, $r) !== 1) {
            return null;
        }
        [, $first, $last] = $r;
        if ($first === '') {
            if ($last === '') {
                return null;
            }
            // Suffix range: the last N bytes. N = 0, or an empty file, has nothing to give.
            $n = self::number($last);
            if ($n === 0 || $size === 0) {
                return false;
            }
            $n = \min($n, $size);
            return [$size - $n, $n];
        }
        $start = self::number($first);
        if ($last !== '' && self::number($last) < $start) {
            return null;   // "500-100" is invalid, so the header is ignored
        }
        if ($start >= $size) {
            return false;
        }
        $end = $last === '' ? $size - 1 : \min(self::number($last), $size - 1);
        return [$start, $end - $start + 1];
    }

    /** Digits beyond what an int holds mean "larger than any file". */
    private static function number(string $digits): int
    {
        $digits = \ltrim($digits, '0');
        if ($digits === '') {
            return 0;
        }
        return \strlen($digits) > 18 ? \PHP_INT_MAX : (int) $digits;
    }
}
