<?php

declare(strict_types=1);

namespace Weft\Http2\Hpack;

/**
 * HPACK decoder (RFC 7541): one per HTTP/2 connection, fed every header block the peer sends, in order,
 * each whole (a HEADERS or PUSH_PROMISE payload and its CONTINUATIONs, concatenated: the connection layer
 * bounds that size).
 *
 * Failures, and what the connection does next:
 * - CompressionError: the block is malformed (bad index, integer over 2^31 - 1 or longer than five
 *   continuation octets, a string overrunning the block, bad Huffman data, a table size update above
 *   the limit or after a field). The dynamic table may be half updated: a connection error
 *   (COMPRESSION_ERROR, RFC 9113 §4.3), and every later decode() on this instance throws it again.
 * - HeaderListTooLarge: the fields add up to more than $maxHeaderListSize (name + value + 32 each, RFC
 *   9113 §6.5.2). The size is counted field by field as the block is decoded; from the field that
 *   crosses the limit on, fields are still decoded (so that every insertion into the dynamic table
 *   happens and the table stays in step with the peer's encoder) but no longer collected, and the
 *   exception comes once the block is done. An HPACK bomb (a small block referencing one large entry
 *   thousands of times) therefore costs the time to walk the block, never the memory of its expansion,
 *   and the connection may answer the stream 431 and go on. Literals are bounded by the block itself.
 *
 * Names are returned as sent (HTTP/2 requires lowercase; the connection layer checks), and whether a
 * field was sent never-indexed is not reported: Weft ends the hop and never re-encodes a request.
 *
 * A client sends the same block again and again once its table holds the fields (h2load: every
 * request after the first is five index octets). The last block that left the table as it was is kept
 * with its fields and the table's generation (a counter every insertion, eviction and size update
 * moves): the same bytes at the same generation decode to the same fields and change nothing, so they
 * are returned as they are, the same array (a caller may compare it with === at no cost). A block that
 * changes the table is never kept: decoding it again would change it again.
 */
final class Decoder
{
    /** Continuation octets an integer may take: five carry 35 bits, more than any value we accept. */
    private const MAX_CONTINUATION = 5;
    private const MAX_INTEGER = 0x7fffffff;

    /** @var array<int, array{0: string, 1: string}> insertion number => field; the newest is $inserted - 1 */
    private array $entries = [];
    private int $inserted = 0;
    private int $oldest = 0;
    private int $size = 0;
    private int $capacity;
    private bool $failed = false;
    /** Moves on every change of the dynamic table: what a kept block's fields depend on. */
    private int $generation = 0;
    private string $lastBlock = '';
    private int $lastGeneration = -1;
    /** @var list<array{0: string, 1: string}> */
    private array $lastFields = [];

    /**
     * @param int $maxTableSize the SETTINGS_HEADER_TABLE_SIZE we advertise: a size update above it is a
     *                          CompressionError
     * @param int $maxHeaderListSize the SETTINGS_MAX_HEADER_LIST_SIZE we enforce (name + value + 32 per field)
     */
    public function __construct(private readonly int $maxTableSize = 4096, private readonly int $maxHeaderListSize = 65536)
    {
        if ($maxTableSize < 0 || $maxHeaderListSize < 0) {
            throw new \InvalidArgumentException('HPACK: table and header list sizes cannot be negative');
        }
        // The table starts at the size we advertise, as RFC 7541's examples (Appendix C.5) and nghttp2 do.
        // Larger than the peer's encoder assumes (it starts at HTTP/2's 4096 until it sends a size
        // update) is harmless: indices count from the newest entry and we only evict later. Smaller (we
        // advertise under 4096 and the peer encodes before our SETTINGS reach it) can only make a
        // reference miss, a CompressionError, never resolve to a wrong entry.
        $this->capacity = $maxTableSize;
    }

    /**
     * @return list<array{0: string, 1: string}> name/value pairs in order
     * @throws CompressionError|HeaderListTooLarge
     */
    public function decode(string $block): array
    {
        if ($this->failed) {
            throw new CompressionError('HPACK: this decoder failed on an earlier block; its table is out of step, the connection must end');
        }
        if ($block === $this->lastBlock && $this->generation === $this->lastGeneration) {
            return $this->lastFields;
        }
        $generation = $this->generation;
        try {
            $fields = $this->decodeBlock($block);
        } catch (CompressionError $e) {
            $this->failed = true;
            throw $e;
        }
        if ($this->generation === $generation) {
            $this->lastBlock = $block;
            $this->lastGeneration = $generation;
            $this->lastFields = $fields;
        }
        return $fields;
    }

    /** Moves whenever the dynamic table changes (an insertion, an eviction, a size update). */
    public function generation(): int
    {
        return $this->generation;
    }

    /** @return list<array{0: string, 1: string}> */
    private function decodeBlock(string $block): array
    {
        $end = \strlen($block);
        $pos = 0;
        $headers = [];
        $listSize = 0;
        $fieldSeen = false;
        while ($pos < $end) {
            $octet = \ord($block[$pos++]);
            if ($octet >= 0x80) {
                // §6.1 indexed field: 1xxxxxxx
                $index = $octet & 0x7f;
                if ($index === 0x7f) {
                    $index = $this->integer($block, $pos, 0x7f);
                } elseif ($index === 0) {
                    throw new CompressionError('HPACK: an indexed field with index 0');
                }
                $field = $index <= StaticTable::COUNT
                    ? StaticTable::ENTRIES[$index]
                    : ($this->entries[$this->inserted + StaticTable::COUNT - $index] ?? $this->beyondTheTable($index));
            } elseif ($octet >= 0x40) {
                // §6.2.1 literal with incremental indexing: 01xxxxxx
                $field = $this->literal($block, $pos, $octet & 0x3f, 0x3f);
                $this->insert($field);
            } elseif ($octet >= 0x20) {
                // §6.3 dynamic table size update: 001xxxxx, only before the block's first field (§4.2)
                if ($fieldSeen) {
                    throw new CompressionError('HPACK: a dynamic table size update after a field of the block');
                }
                $size = $octet & 0x1f;
                if ($size === 0x1f) {
                    $size = $this->integer($block, $pos, 0x1f);
                }
                if ($size > $this->maxTableSize) {
                    throw new CompressionError("HPACK: a dynamic table size update to $size, above the {$this->maxTableSize} we allow");
                }
                $this->capacity = $size;
                $this->generation++;
                $this->evictDownTo($size);
                continue;
            } else {
                // §6.2.2 without indexing 0000xxxx, §6.2.3 never indexed 0001xxxx
                $field = $this->literal($block, $pos, $octet & 0x0f, 0x0f);
            }
            $fieldSeen = true;
            $listSize += \strlen($field[0]) + \strlen($field[1]) + 32;
            if ($listSize <= $this->maxHeaderListSize) {
                $headers[] = $field;
            } else {
                $headers = []; // over the limit: keep decoding for the table's sake, collect nothing
            }
        }
        if ($listSize > $this->maxHeaderListSize) {
            throw new HeaderListTooLarge($this->maxHeaderListSize);
        }
        return $headers;
    }

    /** The dynamic table's size as RFC 7541 §4.1 counts it (name + value + 32 per entry). */
    public function tableSize(): int
    {
        return $this->size;
    }

    /**
     * The dynamic table, newest first (index 62 first): for tests and diagnostics.
     *
     * @return list<array{0: string, 1: string}>
     */
    public function tableEntries(): array
    {
        return \array_reverse(\array_values($this->entries));
    }

    /** A dynamic index with no entry: evicted entries are unset, so the lookup missed. */
    private function beyondTheTable(int $index): never
    {
        $count = $this->inserted - $this->oldest;
        throw new CompressionError("HPACK: index $index is beyond the table (61 static entries and $count dynamic ones)");
    }

    /**
     * A literal field's name (indexed, or a string when $index is 0) and value.
     *
     * @return array{0: string, 1: string}
     */
    private function literal(string $block, int &$pos, int $index, int $mask): array
    {
        if ($index === $mask) {
            $index = $this->integer($block, $pos, $mask);
        }
        if ($index === 0) {
            $name = $this->string($block, $pos);
        } else {
            $name = ($index <= StaticTable::COUNT
                ? StaticTable::ENTRIES[$index]
                : ($this->entries[$this->inserted + StaticTable::COUNT - $index] ?? $this->beyondTheTable($index)))[0];
        }
        return [$name, $this->string($block, $pos)];
    }

    /** §5.2: H bit, 7-bit prefix length, octets. */
    private function string(string $block, int &$pos): string
    {
        if (!isset($block[$pos])) {
            throw new CompressionError('HPACK: the block ends where a string was expected');
        }
        $octet = \ord($block[$pos++]);
        $length = $octet & 0x7f;
        if ($length === 0x7f) {
            $length = $this->integer($block, $pos, 0x7f);
        }
        if ($length > \strlen($block) - $pos) {
            throw new CompressionError("HPACK: a string of $length octets overruns the block");
        }
        $raw = \substr($block, $pos, $length);
        $pos += $length;
        return $octet >= 0x80 ? Huffman::decode($raw) : $raw;
    }

    /**
     * §5.1: the continuation of an integer whose prefix was all ones ($prefix); $pos is past the prefix octet.
     */
    private function integer(string $block, int &$pos, int $prefix): int
    {
        $value = $prefix;
        $shift = 0;
        for ($n = 0; $n < self::MAX_CONTINUATION; $n++) {
            if (!isset($block[$pos])) {
                throw new CompressionError('HPACK: the block ends inside an integer');
            }
            $octet = \ord($block[$pos++]);
            $value += ($octet & 0x7f) << $shift;
            if ($value > self::MAX_INTEGER) {
                throw new CompressionError('HPACK: an integer above 2^31 - 1');
            }
            if ($octet < 0x80) {
                return $value;
            }
            $shift += 7;
        }
        throw new CompressionError('HPACK: an integer longer than ' . self::MAX_CONTINUATION . ' continuation octets');
    }

    /** @param array{0: string, 1: string} $field */
    private function insert(array $field): void
    {
        $size = \strlen($field[0]) + \strlen($field[1]) + 32;
        $this->generation++;
        if ($size > $this->capacity) {
            // §4.4: an entry larger than the table empties it and is not added; not an error.
            $this->evictDownTo(0);
            return;
        }
        $this->evictDownTo($this->capacity - $size);
        $this->entries[$this->inserted++] = $field;
        $this->size += $size;
    }

    private function evictDownTo(int $size): void
    {
        while ($this->size > $size) {
            [$name, $value] = $this->entries[$this->oldest];
            unset($this->entries[$this->oldest++]);
            $this->size -= \strlen($name) + \strlen($value) + 32;
        }
    }
}
