<?php

declare(strict_types=1);

namespace Weft\Http\Message;

/**
 * Operations on a raw, already validated header block.
 *
 * A block is the header section of a message exactly as it arrived, with every field line *preceded*
 * by CRLF and no trailing CRLF: "\r\nHost: a\r\nAccept: b". Keeping it raw lets the parser hand a
 * request over without splitting or lowercasing anything; a single lookup is one stripos, and the
 * full map is only built when someone asks for all headers. The leading CRLF makes "\r\nname:" an
 * exact, unambiguous needle: field values cannot contain CR or LF (the grammar below forbids it).
 *
 * @internal shared by Request, ParsedResponse and the parsers; not a public API.
 */
final class HeaderBlock
{
    /** PCRE class of RFC 9110 token characters (header names, methods). */
    public const TOKEN = '[!#$%&\'*+\-.^_`|~0-9A-Za-z]';

    /**
     * PCRE source of one field line in block form: CRLF, name, colon, value. A value may hold any
     * byte but CR, LF and NUL, the three RFC 9110 §5.5 says to reject; other controls may be kept.
     * NUL is deliberately not excluded here: PCRE's JIT scans a class of two excluded bytes with
     * SIMD and a larger class byte by byte (~40% of the parse time), so callers of this pattern
     * reject NUL with one str_contains($block, "\0") instead.
     */
    public const FIELD = '\r\n' . self::TOKEN . '++:[^\r\n]*+';

    public static function get(string $block, string $name): ?string
    {
        $needle = "\r\n" . $name . ':';
        $pos = stripos($block, $needle);
        // A name holding ":" could match inside a value ("a:b" finds "A: b..."): not a field name.
        if ($pos === false || str_contains($name, ':')) {
            return null;
        }
        $start = $pos + \strlen($needle);
        $end = strpos($block, "\r\n", $start);
        if ($end === false) {
            return trim(substr($block, $start), " \t");
        }
        if (stripos($block, $needle, $end) === false) {
            return trim(substr($block, $start, $end - $start), " \t");
        }
        return implode(', ', self::values($block, $name));
    }

    /** @return list<string> every value of the field, in order of arrival */
    public static function values(string $block, string $name): array
    {
        if ($block === '' || str_contains($name, ':')) {
            return [];
        }
        $needle = "\r\n" . $name . ':';
        $length = \strlen($needle);
        $values = [];
        $pos = 0;
        while (($pos = stripos($block, $needle, $pos)) !== false) {
            $start = $pos + $length;
            $end = strpos($block, "\r\n", $start);
            if ($end === false) {
                $end = \strlen($block);
            }
            $values[] = trim(substr($block, $start, $end - $start), " \t");
            $pos = $end;
        }
        return $values;
    }

    public static function has(string $block, string $name): bool
    {
        return $block !== '' && !str_contains($name, ':') && stripos($block, "\r\n" . $name . ':') !== false;
    }

    /** @return array<string, list<string>> lowercase names, values in order of arrival */
    public static function parse(string $block): array
    {
        if ($block === '') {
            return [];
        }
        $map = [];
        foreach (explode("\r\n", substr($block, 2)) as $line) {
            $colon = strpos($line, ':');
            $map[strtolower(substr($line, 0, $colon))][] = trim(substr($line, $colon + 1), " \t");
        }
        return $map;
    }

    /**
     * Builds a block from user-supplied headers (tests, the FPM front controller).
     *
     * @param array<array-key, string|int|float|list<string|int|float>> $headers
     * @throws \InvalidArgumentException on a name that is not a token or a value with control bytes,
     *         since either would let a caller smuggle extra fields into the block
     */
    public static function fromArray(array $headers): string
    {
        $block = '';
        foreach ($headers as $name => $values) {
            $name = (string) $name;
            if (preg_match('/\A' . self::TOKEN . '++\z/', $name) !== 1) {
                throw new \InvalidArgumentException(sprintf('Invalid header name "%s"', addcslashes($name, "\0..\37\177..\377")));
            }
            foreach (\is_array($values) ? $values : [$values] as $value) {
                $value = trim((string) $value, " \t");
                if (strpbrk($value, "\r\n\0") !== false) {
                    throw new \InvalidArgumentException(sprintf('Invalid value for header "%s": CR, LF and NUL are not allowed', $name));
                }
                $block .= "\r\n" . $name . ': ' . $value;
            }
        }
        return $block;
    }

    /** Whether a comma-separated list value (Connection, Transfer-Encoding) holds the token, any case. */
    public static function listHas(string $value, string $token): bool
    {
        if (!str_contains($value, ',')) {
            return strcasecmp(trim($value, " \t"), $token) === 0;
        }
        foreach (explode(',', $value) as $item) {
            if (strcasecmp(trim($item, " \t"), $token) === 0) {
                return true;
            }
        }
        return false;
    }
}
