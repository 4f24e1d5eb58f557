<?php

declare(strict_types=1);

namespace Weft\Http2\Hpack;

/**
 * The decoded header list is larger than the limit (RFC 9113 §6.5.2 SETTINGS_MAX_HEADER_LIST_SIZE: the sum
 * of name + value + 32 per field). Thrown only after the whole block was decoded, so the dynamic table is
 * in step with the peer's: the connection may answer the stream 431 and go on.
 */
final class HeaderListTooLarge extends HpackException
{
    public function __construct(public readonly int $limit)
    {
        parent::__construct("HPACK: the header list is larger than $limit bytes (name + value + 32 per field)");
    }
}
