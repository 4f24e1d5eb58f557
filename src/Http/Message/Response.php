<?php

declare(strict_types=1);

namespace Weft\Http\Message;

/**
 * An HTTP response: a string body, or a producer that streams the body (Response::stream()), and
 * trailer fields sent after it when it has any (withTrailers()).
 *
 * Headers are stored exactly as given (name => value or list of values, any case) because the
 * encoder writes them out as they are; lookups are case-insensitive. Framing headers
 * (Content-Length, Transfer-Encoding, Connection) are the encoder's business — see ResponseEncoder.
 * Header bytes are validated once, by the encoder, rather than here on every construction.
 */
final class Response
{
    public const REASONS = [
        100 => 'Continue', 101 => 'Switching Protocols', 102 => 'Processing', 103 => 'Early Hints',
        200 => 'OK', 201 => 'Created', 202 => 'Accepted', 203 => 'Non-Authoritative Information',
        204 => 'No Content', 205 => 'Reset Content', 206 => 'Partial Content', 207 => 'Multi-Status',
        208 => 'Already Reported', 226 => 'IM Used',
        300 => 'Multiple Choices', 301 => 'Moved Permanently', 302 => 'Found', 303 => 'See Other',
        304 => 'Not Modified', 305 => 'Use Proxy', 307 => 'Temporary Redirect', 308 => 'Permanent Redirect',
        400 => 'Bad Request', 401 => 'Unauthorized', 402 => 'Payment Required', 403 => 'Forbidden',
        404 => 'Not Found', 405 => 'Method Not Allowed', 406 => 'Not Acceptable',
        407 => 'Proxy Authentication Required', 408 => 'Request Timeout', 409 => 'Conflict', 410 => 'Gone',
        411 => 'Length Required', 412 => 'Precondition Failed', 413 => 'Content Too Large',
        414 => 'URI Too Long', 415 => 'Unsupported Media Type', 416 => 'Range Not Satisfiable',
        417 => 'Expectation Failed', 418 => "I'm a teapot", 421 => 'Misdirected Request',
        422 => 'Unprocessable Content', 423 => 'Locked', 424 => 'Failed Dependency', 425 => 'Too Early',
        426 => 'Upgrade Required', 428 => 'Precondition Required', 429 => 'Too Many Requests',
        431 => 'Request Header Fields Too Large', 451 => 'Unavailable For Legal Reasons',
        500 => 'Internal Server Error', 501 => 'Not Implemented', 502 => 'Bad Gateway',
        503 => 'Service Unavailable', 504 => 'Gateway Timeout', 505 => 'HTTP Version Not Supported',
        506 => 'Variant Also Negotiates', 507 => 'Insufficient Storage', 508 => 'Loop Detected',
        510 => 'Not Extended', 511 => 'Network Authentication Required',
    ];

    /**
     * Fields that may not be trailers (RFC 9110 §6.5.1): those that frame the message or the connection,
     * route it, or that a recipient must know before the content (its format, caching, authentication,
     * cookies). Names that are not tokens (HTTP/2's pseudo-headers) fail HeaderField's rule anyway.
     */
    public const FORBIDDEN_TRAILERS = [
        'content-length' => true, 'transfer-encoding' => true, 'trailer' => true, 'te' => true,
        'connection' => true, 'keep-alive' => true, 'proxy-connection' => true, 'upgrade' => true,
        'host' => true, 'content-type' => true, 'content-encoding' => true, 'content-range' => true,
        'cache-control' => true, 'expires' => true, 'pragma' => true, 'age' => true, 'vary' => true,
        'date' => true, 'location' => true, 'retry-after' => true, 'expect' => true, 'max-forwards' => true,
        'range' => true, 'authorization' => true, 'proxy-authorization' => true, 'www-authenticate' => true,
        'proxy-authenticate' => true, 'set-cookie' => true, 'cookie' => true,
    ];

    /** @var array<array-key, string|int|float|list<string|int|float>> */
    private array $headers;
    private ?\Closure $producer = null;
    private ?Upgrade $upgrade = null;
    /**
     * Trailer fields or the closure that makes them; null (the default) for none, so a writer tells a
     * response without trailers by one comparison (hasTrailers()).
     *
     * @var array<array-key, string|int|float|list<string|int|float>>|\Closure|null
     */
    private array|\Closure|null $trailers = null;

    /**
     * @param array<string, string|int|float|list<string|int|float>> $headers
     * @param string $reason custom reason phrase; "" for the standard one
     */
    public function __construct(
        private int $status = 200,
        array $headers = [],
        private string $body = '',
        private string $reason = '',
    ) {
        if ($status < 100 || $status > 599) {
            throw new \InvalidArgumentException(sprintf('Invalid HTTP status code %d', $status));
        }
        if ($reason !== '') {
            self::assertReason($reason);
        }
        $this->headers = $headers;
    }

    /**
     * A response whose body is written by $producer(BodyWriter $writer) after the head has been
     * sent. Framing is chosen by the encoder: chunked on HTTP/1.1, close-delimited on HTTP/1.0,
     * or raw if the producer's length is declared with a Content-Length header.
     *
     * @param callable(BodyWriter): void $producer
     * @param array<string, string|int|float|list<string|int|float>> $headers
     */
    public static function stream(callable $producer, int $status = 200, array $headers = []): self
    {
        $response = new self($status, $headers);
        $response->producer = $producer(...);
        return $response;
    }

    /**
     * @param array<string, string|int|float|list<string|int|float>> $headers
     * @throws \JsonException when $data cannot be encoded
     */
    public static function json(mixed $data, int $status = 200, array $headers = []): self
    {
        return new self(
            $status,
            $headers + ['Content-Type' => 'application/json'],
            json_encode($data, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE),
        );
    }

    /** @param array<string, string|int|float|list<string|int|float>> $headers */
    public static function text(string $text, int $status = 200, array $headers = []): self
    {
        return new self($status, $headers + ['Content-Type' => 'text/plain; charset=utf-8'], $text);
    }

    public function status(): int
    {
        return $this->status;
    }

    /** The custom reason phrase if one was set, else the standard one ("" for unknown codes). */
    public function reason(): string
    {
        return $this->reason !== '' ? $this->reason : (self::REASONS[$this->status] ?? '');
    }

    /** Whether a custom reason phrase was set (the encoder caches only standard status lines). */
    public function hasCustomReason(): bool
    {
        return $this->reason !== '';
    }

    /** @return array<string, list<string>> names as given, values as strings */
    public function headers(): array
    {
        $headers = [];
        foreach ($this->headers as $name => $value) {
            $list = [];
            foreach (\is_array($value) ? $value : [$value] as $item) {
                $list[] = (string) $item;
            }
            $headers[(string) $name] = $list;
        }
        return $headers;
    }

    /**
     * Headers exactly as given, for the encoder's hot path.
     *
     * @internal
     * @return array<array-key, string|int|float|list<string|int|float>>
     */
    public function headerFields(): array
    {
        return $this->headers;
    }

    /** Case-insensitive; repeated values are joined with ", ". */
    public function header(string $name): ?string
    {
        foreach ($this->headers as $key => $value) {
            if (strcasecmp((string) $key, $name) === 0) {
                return \is_array($value) ? implode(', ', $value) : (string) $value;
            }
        }
        return null;
    }

    public function hasHeader(string $name): bool
    {
        foreach ($this->headers as $key => $_) {
            if (strcasecmp((string) $key, $name) === 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * Replaces every field of that name, whatever its case.
     *
     * @param string|int|float|list<string|int|float> $value
     */
    public function withHeader(string $name, string|int|float|array $value): self
    {
        $clone = $this->withoutHeader($name);
        $clone->headers[$name] = $value;
        return $clone;
    }

    /** @param string|int|float|list<string|int|float> $value */
    public function withAddedHeader(string $name, string|int|float|array $value): self
    {
        $clone = clone $this;
        foreach ($clone->headers as $key => $existing) {
            if (strcasecmp((string) $key, $name) === 0) {
                $clone->headers[$key] = [...(\is_array($existing) ? $existing : [$existing]), ...(\is_array($value) ? $value : [$value])];
                return $clone;
            }
        }
        $clone->headers[$name] = $value;
        return $clone;
    }

    public function withoutHeader(string $name): self
    {
        $clone = clone $this;
        foreach ($clone->headers as $key => $_) {
            if (strcasecmp((string) $key, $name) === 0) {
                unset($clone->headers[$key]);
            }
        }
        return $clone;
    }

    public function withStatus(int $status, string $reason = ''): self
    {
        if ($status < 100 || $status > 599) {
            throw new \InvalidArgumentException(sprintf('Invalid HTTP status code %d', $status));
        }
        if ($reason !== '') {
            self::assertReason($reason);
        }
        $clone = clone $this;
        $clone->status = $status;
        $clone->reason = $reason;
        return $clone;
    }

    /** A string-bodied copy; a streamed response stops being streamed. */
    public function withBody(string $body): self
    {
        $clone = clone $this;
        $clone->body = $body;
        $clone->producer = null;
        return $clone;
    }

    /** The string body; "" for a streamed response. */
    public function body(): string
    {
        return $this->body;
    }

    public function isStreamed(): bool
    {
        return $this->producer !== null;
    }

    /** @return (\Closure(BodyWriter): void)|null */
    public function producer(): ?\Closure
    {
        return $this->producer;
    }

    /**
     * Trailer fields (RFC 9110 §6.5): sent after the body, as a gRPC-style client reads grpc-status.
     * Either the fields (name => value or list of values, as for headers), or a closure called once
     * per sending, after the last byte of the body has been handed to the server (a streamed body's
     * producer has returned), that returns them: a status computed at the end of a stream. [] removes
     * them.
     *
     * Over HTTP/2 they are a HEADERS frame that ends the stream (names lower-cased); over HTTP/1.1 the
     * trailer section of a chunked body, so a response with trailers goes chunked there, a string body
     * as one chunk, its Content-Length left out of the head (a streamed body is still held to the length
     * it declared: more or less is cut as a failed trailer is). None is sent where none can go: HTTP/1.0,
     * a HEAD request, 1xx, 204 and 304, the fpm mode (PHP's SAPI writes no trailers).
     *
     * A trailer name must be a token and not one of FORBIDDEN_TRAILERS, a value free of CR, LF and the
     * other control bytes. Bad fixed fields are found before the head goes out: the response becomes a
     * 500 with the reason logged, as for a bad header. A closure's fields (or its exception) come when
     * the body is out: the response is cut (HTTP/2: RST_STREAM INTERNAL_ERROR; HTTP/1.1: the connection
     * closed before the last chunk), so the client sees it incomplete, never complete without them.
     *
     * @param array<string, string|int|float|list<string|int|float>>|(\Closure(): array<string, string|int|float|list<string|int|float>>) $trailers
     */
    public function withTrailers(array|\Closure $trailers): self
    {
        $clone = clone $this;
        $clone->trailers = $trailers === [] ? null : $trailers;
        return $clone;
    }

    public function hasTrailers(): bool
    {
        return $this->trailers !== null;
    }

    /**
     * What withTrailers() was given: the fields, or the closure that makes them; null for none.
     *
     * @return array<array-key, string|int|float|list<string|int|float>>|\Closure|null
     */
    public function trailers(): array|\Closure|null
    {
        return $this->trailers;
    }

    /**
     * The trailer fields to send now, checked: the closure called (once per call of this).
     *
     * @internal for the writers of responses
     * @return list<array{0: string, 1: string}> names as given
     * @throws \InvalidArgumentException naming a field that may not be sent
     * @throws \UnexpectedValueException when the closure returns no array; whatever else it throws
     */
    public function trailerFields(): array
    {
        $trailers = $this->trailers;
        if ($trailers instanceof \Closure) {
            $trailers = $trailers();
            if (!\is_array($trailers)) {
                throw new \UnexpectedValueException('A trailer closure must return an array of fields, not ' . \get_debug_type($trailers));
            }
        }
        $fields = [];
        foreach ($trailers ?? [] as $name => $values) {
            $name = (string) $name;
            foreach (\is_array($values) ? $values : [$values] as $value) {
                $value = \is_scalar($value) ? (string) $value : '';
                HeaderField::line($name, $value, 'trailer');
                if (isset(self::FORBIDDEN_TRAILERS[\strtolower($name)])) {
                    throw new \InvalidArgumentException("\"$name\" may not be a trailer: it frames, routes or describes the response before its content (RFC 9110 section 6.5.1)");
                }
                $fields[] = [$name, $value];
            }
        }
        return $fields;
    }

    /**
     * A 101 that switches the connection to another protocol (WebSocket::upgrade() builds it): the
     * server writes the head and hands the connection over to $upgrade.
     *
     * @param array<string, string|int|float|list<string|int|float>> $headers
     */
    public static function switchingProtocols(Upgrade $upgrade, array $headers = []): self
    {
        $response = new self(101, $headers);
        $response->upgrade = $upgrade;
        return $response;
    }

    public function upgrade(): ?Upgrade
    {
        return $this->upgrade;
    }

    private static function assertReason(string $reason): void
    {
        if (preg_match('/[^\t\x20-\x7e\x80-\xff]/', $reason) === 1) {
            throw new \InvalidArgumentException('Reason phrase contains control characters');
        }
    }
}
