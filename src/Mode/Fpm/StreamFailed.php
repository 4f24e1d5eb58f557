<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

/** A streamed response's producer failed after the status and header fields had gone out. */
final class StreamFailed extends \RuntimeException implements \Weft\WeftException
{
    public static function after(\Throwable $previous): self
    {
        return new self('The streamed body failed after the response head was sent: ' . $previous->getMessage(), 0, $previous);
    }

    /** The producer wrote a different number of bytes than the Content-Length it declared. */
    public static function framing(string $message): self
    {
        return new self($message);
    }
}
