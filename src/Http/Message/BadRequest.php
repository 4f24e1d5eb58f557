<?php

declare(strict_types=1);

namespace Weft\Http\Message;

/**
 * The request is well-framed HTTP but its content cannot be understood (invalid JSON, broken
 * multipart). Thrown lazily from Request accessors inside a handler; the server answers 400
 * instead of the usual 500 for a handler exception.
 */
final class BadRequest extends \RuntimeException implements \Weft\WeftException
{
    public readonly int $status;

    private function __construct(string $message, ?\Throwable $previous = null)
    {
        parent::__construct($message, 400, $previous);
        $this->status = 400;
    }

    public static function invalidJson(\JsonException $previous): self
    {
        return new self('Invalid JSON body: ' . $previous->getMessage(), $previous);
    }

    public static function malformedMultipart(string $why): self
    {
        return new self('Malformed multipart/form-data body: ' . $why);
    }
}
