<?php

declare(strict_types=1);

namespace Weft\Http\Server;

/** A streamed response wrote more or fewer bytes than its declared Content-Length. */
final class BodyLengthMismatch extends \LengthException implements \Weft\WeftException
{
    public static function tooLong(int $declared): self
    {
        return new self("the producer wrote more than the declared Content-Length of $declared bytes; the excess was not sent");
    }

    public static function tooShort(int $declared, int $written): self
    {
        return new self("the producer wrote $written of the declared Content-Length of $declared bytes");
    }
}
