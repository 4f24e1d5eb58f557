<?php

declare(strict_types=1);

namespace Weft\Http2\Hpack;

/**
 * A header block the decoder cannot decode (RFC 7541 §2.3.3, §5, §6): a bad index, an integer or string
 * that overruns the block or the implementation limits, invalid Huffman data, a table size update out of
 * place or above the limit. The decoder's dynamic table is then out of step with the peer's encoder, so
 * HTTP/2 makes this a connection error of type COMPRESSION_ERROR (RFC 9113 §4.3): the decoder must not be
 * used again.
 */
final class CompressionError extends HpackException
{
}
