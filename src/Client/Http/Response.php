<?php

declare(strict_types=1);

namespace Weft\Client\Http;

/**
 * A response received by the Client. Header names are case-insensitive. The body is already decoded
 * when it came gzip- or deflate-encoded (the Content-Encoding and Content-Length headers stay as sent).
 */
final class Response
{
    /**
     * @param array<string, list<string>> $headers lowercase names
     */
    public function __construct(
        private readonly int $status,
        private readonly string $reason,
        private readonly array $headers,
        private readonly string $body,
        private readonly string $url,
        private readonly string $version = '1.1',
        private readonly int $redirects = 0,
    ) {
    }

    public function status(): int
    {
        return $this->status;
    }

    public function reason(): string
    {
        return $this->reason;
    }

    /** 2xx */
    public function isSuccessful(): bool
    {
        return $this->status >= 200 && $this->status < 300;
    }

    /** All values of a header joined with ", " (use headerValues() for Set-Cookie); null when absent. */
    public function header(string $name): ?string
    {
        $values = $this->headers[\strtolower($name)] ?? null;
        return $values === null ? null : \implode(', ', $values);
    }

    /** @return list<string> */
    public function headerValues(string $name): array
    {
        return $this->headers[\strtolower($name)] ?? [];
    }

    public function hasHeader(string $name): bool
    {
        return isset($this->headers[\strtolower($name)]);
    }

    /** @return array<string, list<string>> every header, lowercase names */
    public function headers(): array
    {
        return $this->headers;
    }

    public function body(): string
    {
        return $this->body;
    }

    /**
     * The body decoded as JSON (objects as arrays).
     *
     * @throws \JsonException
     */
    public function json(): mixed
    {
        return \json_decode($this->body, true, 512, \JSON_THROW_ON_ERROR | \JSON_BIGINT_AS_STRING);
    }

    /** The URL this response came from: the last one when redirects were followed. */
    public function url(): string
    {
        return $this->url;
    }

    /** How many redirects were followed to get here. */
    public function redirects(): int
    {
        return $this->redirects;
    }

    /** "1.0" or "1.1". */
    public function version(): string
    {
        return $this->version;
    }
}
