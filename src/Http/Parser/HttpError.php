<?php

declare(strict_types=1);

namespace Weft\Http\Parser;

use Weft\Http\Message\ErrorResponse;
use Weft\Http\Message\Response;

/**
 * Input that is not acceptable HTTP, with the status to answer. After a parser throws one it is
 * unusable: the server sends toResponse() with "Connection: close" and closes.
 * Messages never echo the offending bytes, so they are safe to send back as they are.
 */
final class HttpError extends \RuntimeException implements \Weft\WeftException
{
    public readonly int $status;

    private function __construct(int $status, string $message)
    {
        parent::__construct($message, $status);
        $this->status = $status;
    }

    public static function badRequest(string $why): self
    {
        return new self(400, $why);
    }

    /** For the server's header timeout; the parser itself never waits. */
    /** @param bool $body whether the head had arrived and its body stalled (--body-timeout) */
    public static function requestTimeout(bool $body = false): self
    {
        return new self(408, $body ? 'Request body not received in time' : 'Request head not received in time');
    }

    public static function bodyTooLarge(int $limit): self
    {
        return new self(413, sprintf('Body exceeds %d bytes', $limit));
    }

    public static function uriTooLong(int $limit): self
    {
        return new self(414, sprintf('Request line exceeds %d bytes', $limit));
    }

    public static function headerTooLarge(int $limit): self
    {
        return new self(431, sprintf('Header section exceeds %d bytes', $limit));
    }

    public static function tooManyHeaders(int $limit): self
    {
        return new self(431, sprintf('More than %d header fields', $limit));
    }

    public static function unsupportedTransferEncoding(): self
    {
        return new self(501, 'Transfer-Encoding other than chunked is not supported');
    }

    public static function notImplemented(string $why): self
    {
        return new self(501, $why);
    }

    public static function versionNotSupported(): self
    {
        return new self(505, 'Only HTTP/1.0 and HTTP/1.1 are supported');
    }

    /** The peer closed the connection in the middle of a message (response parser). */
    public static function truncated(): self
    {
        return new self(400, 'Connection closed before the message was complete');
    }

    /** A plain-text response carrying the status and message, for the server to send before closing. */
    public function toResponse(): Response
    {
        return ErrorResponse::unreadable($this->status, $this->getMessage());
    }
}
