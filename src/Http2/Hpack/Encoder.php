<?php

declare(strict_types=1);

namespace Weft\Http2\Hpack;

/**
 * HPACK encoder (RFC 7541): one per HTTP/2 connection, encoding every header block we send, in order.
 *
 * Per field, in this order:
 * - sensitive fields (authorization, proxy-authorization, set-cookie, a cookie under 20 octets: short
 *   enough to guess, §7.1.3) are never-indexed literals, so no later response can probe them through the
 *   table and an intermediary must not index them either;
 * - a whole match in the static table (`:status: 200`, `:method: GET`...) or the dynamic table is one
 *   index;
 * - otherwise a literal whose name is an index when either table has the name, added to the dynamic
 *   table (evicting the oldest entries) unless the field is one that changes on nearly every message
 *   (content-length, validators such as etag and last-modified, :path, location...) or is larger than
 *   three quarters of the table, which would only flush it;
 * - a string is Huffman-coded when that is shorter.
 *
 * The dynamic table never exceeds MAX_TABLE_SIZE (4096, HTTP/2's initial value, as nghttp2 does by
 * default) even when the peer allows more: past that the gain is small and the state per connection is
 * not. Names must be lowercase (HTTP/2); they are not checked here.
 *
 * A server answers the same head again and again (a status, a content type, its Server and Date, a
 * length). The last block whose encoding left the table as it was is kept with its fields and the
 * table's generation (moved by every insertion, eviction and size change): the same fields at the same
 * generation encode to the same octets and change nothing, so those are returned. A block that inserts
 * is never kept: encoding it again would insert again, or no longer (and then index what it inserted).
 */
final class Encoder
{
    public const MAX_TABLE_SIZE = 4096;
    /** HTTP/2's initial SETTINGS_HEADER_TABLE_SIZE: what the peer's decoder assumes until told otherwise. */
    private const INITIAL_TABLE_SIZE = 4096;

    /** Never indexed (§7.1.3): credentials, and set-cookie, whose values are secrets for one client. */
    private const SENSITIVE = ['authorization' => true, 'proxy-authorization' => true, 'set-cookie' => true];
    /** A cookie shorter than this is never indexed: low entropy, guessable by probing the table. */
    private const SHORT_COOKIE = 20;
    /** Values that differ on (nearly) every message: indexing them only evicts entries worth keeping. */
    private const NOT_INDEXED = [
        ':path' => true, 'content-length' => true, 'content-range' => true, 'etag' => true,
        'last-modified' => true, 'expires' => true, 'age' => true, 'location' => true, 'if-modified-since' => true,
        'if-none-match' => true, 'if-match' => true, 'if-unmodified-since' => true, 'if-range' => true,
    ];

    /** @var array<int, array{0: string, 1: string, 2: int}> insertion number => [name, value, size] */
    private array $entries = [];
    /** @var array<string, int> "name\0value" => insertion number */
    private array $byField = [];
    /** @var array<string, int> name => insertion number of the newest entry with that name */
    private array $byName = [];
    private int $inserted = 0;
    private int $oldest = 0;
    private int $size = 0;
    private int $capacity;
    /** The smallest size the table had since the last block, to be signalled before the final one (§4.2). */
    private ?int $pendingMin = null;
    /** Moves on every change of the dynamic table: what a kept block depends on. */
    private int $generation = 0;
    /** @var array<array{0: string, 1: string}>|null */
    private ?array $lastFields = null;
    private int $lastGeneration = -1;
    private string $lastBlock = '';

    /** @param int $maxTableSize the peer's SETTINGS_HEADER_TABLE_SIZE when the encoder is made */
    public function __construct(int $maxTableSize = 4096)
    {
        $this->capacity = self::INITIAL_TABLE_SIZE;
        if (\min($maxTableSize, self::MAX_TABLE_SIZE) !== self::INITIAL_TABLE_SIZE) {
            $this->setMaxTableSize($maxTableSize);
        }
    }

    /** The peer's SETTINGS_HEADER_TABLE_SIZE changed: the next block starts with a size update. */
    public function setMaxTableSize(int $size): void
    {
        if ($size < 0) {
            throw new \InvalidArgumentException("HPACK: a table size cannot be negative ($size)");
        }
        $this->capacity = \min($size, self::MAX_TABLE_SIZE);
        $this->generation++;
        $this->evictDownTo($this->capacity);
        $this->pendingMin = \min($this->pendingMin ?? $this->capacity, $this->capacity);
    }

    /**
     * @param iterable<array{0: string, 1: string}> $headers lowercase names
     * @return string one header block
     */
    public function encode(iterable $headers): string
    {
        if ($headers === $this->lastFields && $this->generation === $this->lastGeneration) {
            return $this->lastBlock;
        }
        $generation = $this->generation;
        $out = '';
        // A block that signals a size update is not kept either: the update is said once.
        $keep = $this->pendingMin === null && \is_array($headers);
        if ($this->pendingMin !== null) {
            // §4.2: a shrink then a growth between two blocks is signalled as both, the smallest first.
            if ($this->pendingMin < $this->capacity) {
                $out .= self::integer(0x20, 0x1f, $this->pendingMin);
            }
            $out .= self::integer(0x20, 0x1f, $this->capacity);
            $this->pendingMin = null;
        }
        foreach ($headers as [$name, $value]) {
            $key = $name . "\0" . $value;
            if (isset(self::SENSITIVE[$name]) || ($name === 'cookie' && \strlen($value) < self::SHORT_COOKIE)) {
                $out .= $this->literal(0x10, 0x0f, $name, $value);
                continue;
            }
            $index = StaticTable::BY_FIELD[$key] ?? null;
            if ($index !== null) {
                $out .= $index < 0x7f ? \chr(0x80 | $index) : self::integer(0x80, 0x7f, $index);
                continue;
            }
            $seq = $this->byField[$key] ?? null;
            if ($seq !== null) {
                $out .= self::integer(0x80, 0x7f, StaticTable::COUNT + $this->inserted - $seq);
                continue;
            }
            $size = \strlen($name) + \strlen($value) + 32;
            if (isset(self::NOT_INDEXED[$name]) || $size * 4 > $this->capacity * 3) {
                $out .= $this->literal(0x00, 0x0f, $name, $value);
                continue;
            }
            $out .= $this->literal(0x40, 0x3f, $name, $value);
            $this->insert($name, $value, $key, $size);
        }
        if ($keep && $this->generation === $generation) {
            $this->lastFields = $headers;
            $this->lastGeneration = $generation;
            $this->lastBlock = $out;
        }
        return $out;
    }

    /** Moves whenever the dynamic table changes (an insertion, an eviction, a size change). */
    public function generation(): int
    {
        return $this->generation;
    }

    /** The dynamic table's size as RFC 7541 §4.1 counts it. */
    public function tableSize(): int
    {
        return $this->size;
    }

    /** A literal field: the name as an index when a table has it (before any insertion of this field), then the value. */
    private function literal(int $pattern, int $mask, string $name, string $value): string
    {
        $index = StaticTable::BY_NAME[$name] ?? null;
        if ($index === null && isset($this->byName[$name])) {
            $index = StaticTable::COUNT + $this->inserted - $this->byName[$name];
        }
        if ($index === null) {
            return \chr($pattern) . self::string($name) . self::string($value);
        }
        return ($index < $mask ? \chr($pattern | $index) : self::integer($pattern, $mask, $index)) . self::string($value);
    }

    /** §5.2: Huffman-coded when that is shorter. */
    private static function string(string $octets): string
    {
        $length = \strlen($octets);
        if ($length > 1) {
            $coded = Huffman::encode($octets);
            $codedLength = \strlen($coded);
            if ($codedLength < $length) {
                return ($codedLength < 0x7f ? \chr(0x80 | $codedLength) : self::integer(0x80, 0x7f, $codedLength)) . $coded;
            }
        }
        return ($length < 0x7f ? \chr($length) : self::integer(0x00, 0x7f, $length)) . $octets;
    }

    /** §5.1: $value on a prefix of the bits in $mask, after the representation's $pattern bits. */
    private static function integer(int $pattern, int $mask, int $value): string
    {
        if ($value < $mask) {
            return \chr($pattern | $value);
        }
        $out = \chr($pattern | $mask);
        $value -= $mask;
        while ($value >= 0x80) {
            $out .= \chr(($value & 0x7f) | 0x80);
            $value >>= 7;
        }
        return $out . \chr($value);
    }

    private function insert(string $name, string $value, string $key, int $size): void
    {
        $this->generation++;
        $this->evictDownTo($this->capacity - $size);
        $seq = $this->inserted++;
        $this->entries[$seq] = [$name, $value, $size];
        $this->byField[$key] = $seq;
        $this->byName[$name] = $seq;
        $this->size += $size;
    }

    private function evictDownTo(int $size): void
    {
        while ($this->size > $size) {
            $seq = $this->oldest++;
            [$name, $value, $entrySize] = $this->entries[$seq];
            unset($this->entries[$seq]);
            $this->size -= $entrySize;
            $key = $name . "\0" . $value;
            if (($this->byField[$key] ?? null) === $seq) {
                unset($this->byField[$key]);
            }
            if (($this->byName[$name] ?? null) === $seq) {
                unset($this->byName[$name]);
            }
        }
    }
}
