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

    /**
     * A request the server could not read (a 400, 413, 414, 431, 501 from the parser, or a side server's
     * own): $why is said as it is, and must not echo the offending bytes.
     */
    public static function unreadable(int $status, string $why): Response
    {
        return new Response($status, ['Content-Type' => self::TEXT], $why . "\n");
    }

    /** 404: nothing answers this path; $hint may say what does. */
    public static function notFound(string $hint = ''): Response
    {
        return new Response(404, ['Content-Type' => self::TEXT], $hint === '' ? "Not Found\n" : "Not Found: $hint\n");
    }

    /** 405: the path exists, not for this method. @param list<string> $allowed */
    public static function methodNotAllowed(array $allowed): Response
    {
        return new Response(405, ['Allow' => \implode(', ', $allowed), 'Content-Type' => self::TEXT], "Method Not Allowed\n");
    }

    /** 412: an If-Match or If-Unmodified-Since condition does not hold. */
    public static function preconditionFailed(): Response
    {
        return new Response(412, ['Content-Type' => self::TEXT], "Precondition Failed\n");
    }

    /** 416: no range asked for lies within the $size bytes there are. */
    public static function rangeNotSatisfiable(int $size): Response
    {
        return new Response(416, ['Content-Range' => 'bytes */' . $size, 'Content-Type' => self::TEXT], "Range Not Satisfiable\n");
    }

    /** 504: the application ran past --max-request-time. */
    public static function gatewayTimeout(): Response
    {
        return new Response(504, ['Content-Type' => self::TEXT], "Gateway Timeout: the request ran too long\n");
    }
}
