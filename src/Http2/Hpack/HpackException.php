<?php

declare(strict_types=1);

namespace Weft\Http2\Hpack;

/** Any failure of the HPACK codec (RFC 7541): catch this for both kinds below. */
class HpackException extends \RuntimeException implements \Weft\WeftException
{
}
