<?php

declare(strict_types=1);

namespace Weft\Client\Redis\Protocol;

use Weft\Client\Redis\RedisError;

/**
 * Decodes RESP2 and RESP3 replies from bytes as they arrive. Pure: no I/O.
 *
 * Decoding: simple and blob strings -> string; integers -> int; RESP2 null bulk/array and RESP3 null ->
 * null; arrays and sets -> list; maps -> array keyed by the map's keys; booleans -> bool; doubles ->
 * float (inf, -inf, nan included); big numbers -> string (PHP has no big integers); verbatim strings ->
 * string without their "txt:" format prefix; errors (simple or blob) -> RedisError objects, returned, not
 * thrown; top-level pushes -> Push objects. Attributes are not part of the reply: they are collected
 * and returned by takeAttributes(). Streamed strings ($?) and streamed aggregates (*? ~? %?) are joined.
 *
 * The parser is resumable: a reply split across reads is never re-parsed from its start. It keeps the
 * aggregates it has opened on a stack, and an element is consumed only when it is complete, so a
 * 100,000-element array arriving in 64 KB pieces costs one pass.
 */
final class RespReader
{
    /** Largest blob accepted (Redis's own proto-max-bulk-len default). */
    public const MAX_BULK = 512 * 1024 * 1024;
    private const COMPACT_AFTER = 65536;

    private string $buffer = '';
    private int $offset = 0;
    /** @var list<array{string, int, list<mixed>}> open aggregates: type, items still expected (< 0: streamed), items */
    private array $stack = [];
    /** @var array<array-key, mixed> */
    private array $attributes = [];

    public function feed(string $data): void
    {
        if ($this->offset >= \strlen($this->buffer)) {
            $this->buffer = $data;
            $this->offset = 0;
            return;
        }
        if ($this->offset > self::COMPACT_AFTER) {
            $this->buffer = \substr($this->buffer, $this->offset);
            $this->offset = 0;
        }
        $this->buffer .= $data;
    }

    /** Bytes received and not yet consumed by a complete reply. */
    public function buffered(): int
    {
        return \strlen($this->buffer) - $this->offset;
    }

    /** Whether a reply has been started and not finished (the stream is mid-reply). */
    public function isMidReply(): bool
    {
        return $this->stack !== [] || $this->offset < \strlen($this->buffer);
    }

    /**
     * Attributes ("|" frames) seen since the last call, merged.
     *
     * @return array<array-key, mixed>
     */
    public function takeAttributes(): array
    {
        $attributes = $this->attributes;
        $this->attributes = [];
        return $attributes;
    }

    /** Forgets everything buffered and half-parsed. */
    public function reset(): void
    {
        $this->buffer = '';
        $this->offset = 0;
        $this->stack = [];
        $this->attributes = [];
    }

    /**
     * Takes the next complete top-level reply into $value.
     *
     * @return bool false when more bytes are needed (nothing is lost; feed() and call again)
     * @throws ProtocolError
     */
    public function next(mixed &$value): bool
    {
        $buffer = $this->buffer;
        $offset = $this->offset;
        $length = \strlen($buffer);

        while ($offset < $length) {
            $eol = \strpos($buffer, "\r\n", $offset);
            if ($eol === false) {
                break;
            }
            $type = $buffer[$offset];
            switch ($type) {
                case '$':
                case '!':
                case '=':
                    if ($buffer[$offset + 1] === '?') {
                        // Streamed string: ";<n>" chunks follow until ";0".
                        $this->stack[] = ['?', -1, []];
                        $offset = $eol + 2;
                        continue 2;
                    }
                    $size = (int) \substr($buffer, $offset + 1, $eol - $offset - 1);
                    if ($size < 0) {
                        $item = null;
                        $offset = $eol + 2;
                        break;
                    }
                    if ($size > self::MAX_BULK) {
                        throw ProtocolError::unexpected($buffer, $offset);
                    }
                    if ($eol + $size + 4 > $length) {
                        break 2;
                    }
                    $item = \substr($buffer, $eol + 2, $size);
                    $offset = $eol + $size + 4;
                    if ($type === '!') {
                        $item = RedisError::fromReply($item);
                    } elseif ($type === '=') {
                        // "txt:" or "mkd:" says how to show it; the text is what callers want.
                        $item = \substr($item, 4);
                    }
                    break;

                case '+':
                    $item = \substr($buffer, $offset + 1, $eol - $offset - 1);
                    $offset = $eol + 2;
                    break;

                case ':':
                    $item = (int) \substr($buffer, $offset + 1, $eol - $offset - 1);
                    $offset = $eol + 2;
                    break;

                case '*':
                case '%':
                case '~':
                case '>':
                case '|':
                    $count = \substr($buffer, $offset + 1, $eol - $offset - 1);
                    $offset = $eol + 2;
                    if ($count === '?') {
                        $this->stack[] = [$type, -1, []];
                        continue 2;
                    }
                    $count = (int) $count;
                    if ($count < 0) {
                        $item = null;
                        break;
                    }
                    if ($count === 0) {
                        if ($type === '|') {
                            continue 2;
                        }
                        $item = $type === '>' && $this->stack === [] ? self::push([]) : [];
                        break;
                    }
                    $this->stack[] = [$type, $type === '%' || $type === '|' ? 2 * $count : $count, []];
                    continue 2;

                case '-':
                    $item = RedisError::fromReply(\substr($buffer, $offset + 1, $eol - $offset - 1));
                    $offset = $eol + 2;
                    break;

                case '_':
                    $item = null;
                    $offset = $eol + 2;
                    break;

                case '#':
                    $item = $buffer[$offset + 1] === 't';
                    $offset = $eol + 2;
                    break;

                case ',':
                    $item = self::double(\substr($buffer, $offset + 1, $eol - $offset - 1));
                    $offset = $eol + 2;
                    break;

                case '(':
                    $item = \substr($buffer, $offset + 1, $eol - $offset - 1);
                    $offset = $eol + 2;
                    break;

                case ';':
                    // A chunk of a streamed string.
                    $top = \array_key_last($this->stack);
                    if ($top === null || $this->stack[$top][0] !== '?') {
                        throw ProtocolError::unexpected($buffer, $offset);
                    }
                    $size = (int) \substr($buffer, $offset + 1, $eol - $offset - 1);
                    if ($size === 0) {
                        $offset = $eol + 2;
                        $item = \implode('', \array_pop($this->stack)[2]);
                        break;
                    }
                    if ($eol + $size + 4 > $length) {
                        break 2;
                    }
                    $this->stack[$top][2][] = \substr($buffer, $eol + 2, $size);
                    $offset = $eol + $size + 4;
                    continue 2;

                case '.':
                    // The end of a streamed aggregate.
                    $top = \array_key_last($this->stack);
                    if ($top === null || $this->stack[$top][1] >= 0) {
                        throw ProtocolError::unexpected($buffer, $offset);
                    }
                    $offset = $eol + 2;
                    $frame = \array_pop($this->stack);
                    if ($frame[0] === '|') {
                        $this->attributes = self::map($frame[2]) + $this->attributes;
                        continue 2;
                    }
                    $item = $this->finish($frame);
                    break;

                default:
                    throw ProtocolError::unexpected($buffer, $offset);
            }

            // $item is complete: it is the reply, or the next element of the innermost open aggregate.
            while (true) {
                $top = \array_key_last($this->stack);
                if ($top === null) {
                    $this->offset = $offset;
                    $value = $item;
                    return true;
                }
                $this->stack[$top][2][] = $item;
                if (--$this->stack[$top][1] !== 0) {
                    continue 2;
                }
                $frame = \array_pop($this->stack);
                if ($frame[0] === '|') {
                    $this->attributes = self::map($frame[2]) + $this->attributes;
                    continue 2;
                }
                $item = $this->finish($frame);
            }
        }
        $this->offset = $offset;
        return false;
    }

    /** @param array{string, int, list<mixed>} $frame */
    private function finish(array $frame): mixed
    {
        return match ($frame[0]) {
            '%' => self::map($frame[2]),
            '>' => $this->stack === [] ? self::push($frame[2]) : $frame[2],
            default => $frame[2],
        };
    }

    /**
     * @param list<mixed> $items key, value, key, value, ...
     * @return array<array-key, mixed>
     */
    private static function map(array $items): array
    {
        $map = [];
        for ($i = 0, $n = \count($items); $i < $n; $i += 2) {
            $key = $items[$i];
            if (!\is_string($key) && !\is_int($key)) {
                // PHP array keys are strings or ints; other keys (possible from Lua or modules) are spelled out.
                $key = \is_scalar($key) ? \var_export($key, true) : \json_encode($key, \JSON_INVALID_UTF8_SUBSTITUTE);
            }
            $map[$key] = $items[$i + 1];
        }
        return $map;
    }

    /** @param list<mixed> $items */
    private static function push(array $items): Push
    {
        $kind = $items === [] ? '' : \array_shift($items);
        return new Push(\is_string($kind) ? $kind : (string) \json_encode($kind), $items);
    }

    /** A RESP3 double, or a RESP2 score string: also "inf", "-inf" and the spellings of NaN. */
    public static function double(string $text): float
    {
        if (\is_numeric($text)) {
            return (float) $text;
        }
        return match (\strtolower($text)) {
            'inf', '+inf', 'infinity', '+infinity' => \INF,
            '-inf', '-infinity' => -\INF,
            default => \NAN,
        };
    }
}
