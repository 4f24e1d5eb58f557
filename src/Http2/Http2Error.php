<?php

declare(strict_types=1);

namespace Weft\Http2;

use Weft\WeftException;

/**
 * A connection error (RFC 9113 §5.4.1): the session answers it with a GOAWAY carrying $code and closes
 * the connection. Raised while frames are read; never leaves the session.
 *
 * @internal
 */
final class Http2Error extends \RuntimeException implements WeftException
{
    public static function connection(int $code, string $why): self
    {
        return new self($why, $code);
    }
}
