<?php

declare(strict_types=1);

namespace Weft\Http\Message;

/**
 * An HTTP response: a string body, or a producer that streams the body (Response::stream()).
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

    /** @var array<array-key, string|int|float|list<string|int|float>> */
    private array $headers;
    private ?\Closure $producer = null;
    private ?Upgrade $upgrade = null;

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
