<?php

declare(strict_types=1);

namespace Weft\Http\Message;

/**
 * The one place that turns a server-side refusal or failure into a response: status, body and headers.
 * Whether the connection closes is said here too: a refusal carries "Connection: close", which the
 * encoder honours (ResponseEncoder::keepAlive()). Pure: the server decides when, this says what.
 */
final class ErrorResponse
{
    private const TEXT = 'text/plain; charset=utf-8';

    /**
     * 503: the server will not take this request now (overloaded, too many in flight, the worker failed
     * under it); the client may retry in a second, on a new connection.
     */
    public static function unavailable(string $reason): Response
    {
        return new Response(503, ['Content-Type' => self::TEXT, 'Retry-After' => '1', 'Connection' => 'close'], "Service unavailable: $reason\n");
    }

    /** 500: the application failed; the trace goes into the body only in debug mode. */
    public static function internal(?\Throwable $e = null, bool $debug = false): Response
    {
        $body = $debug && $e !== null ? "Internal Server Error\n\n" . $e . "\n" : "Internal Server Error\n";
        return new Response(500, ['Content-Type' => self::TEXT], $body);
    }

    /** 400: the request's body could not be decoded (form, JSON, multipart). */
    public static function badRequest(string $reason): Response
    {
        return new Response(400, ['Content-Type' => self::TEXT], "Bad Request: $reason\n");
    }

    /** 504: the application ran past --max-request-time. */
    public static function gatewayTimeout(): Response
    {
        return new Response(504, ['Content-Type' => self::TEXT], "Gateway Timeout: the request ran too long\n");
    }
}
