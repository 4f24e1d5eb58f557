<?php

declare(strict_types=1);

namespace Weft\Http\Parser;

use Weft\Http\Message\HeaderBlock;

/**
 * A response as ResponseParser read it off the wire: status line, raw header block (see HeaderBlock,
 * looked up case-insensitively), body with any transfer coding removed, trailers. The HTTP client turns
 * it into the one response type its users see, Weft\Client\Http\Response.
 *
 * @internal the parser's product, not a second response type.
 */
final class ParsedResponse
{
    /** @var array<string, list<string>>|null */
    private ?array $headerMap = null;

    /**
     * @param string $headerBlock validated header section in HeaderBlock form
     * @param string $trailerBlock chunked trailer section, same form
     */
    public function __construct(
        private readonly int $status,
        private readonly string $reason,
        private readonly string $version,
        private readonly string $headerBlock = '',
        private readonly string $body = '',
        private readonly string $trailerBlock = '',
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

    /** "1.0" or "1.1". */
    public function version(): string
    {
        return $this->version;
    }

    /** 1xx: an interim response; the final one follows on the same connection. */
    public function isInformational(): bool
    {
        return $this->status < 200;
    }

    /** Case-insensitive; repeated fields are joined with ", " (use headers() for Set-Cookie). */
    public function header(string $name): ?string
    {
        return HeaderBlock::get($this->headerBlock, $name);
    }

    public function hasHeader(string $name): bool
    {
        return HeaderBlock::has($this->headerBlock, $name);
    }

    /** @return array<string, list<string>> lowercase names */
    public function headers(): array
    {
        return $this->headerMap ??= HeaderBlock::parse($this->headerBlock);
    }

    /** @return array<string, list<string>> lowercase names */
    public function trailers(): array
    {
        return HeaderBlock::parse($this->trailerBlock);
    }

    public function body(): string
    {
        return $this->body;
    }

    /**
     * Whether the server lets the connection be reused, by its version and Connection field.
     * A body delimited by the connection closing (ResponseParser::finish()) ends it regardless.
     */
    public function keepAlive(): bool
    {
        $connection = HeaderBlock::get($this->headerBlock, 'connection');
        if ($connection === null) {
            return $this->version !== '1.0';
        }
        if ($this->version === '1.0') {
            return HeaderBlock::listHas($connection, 'keep-alive');
        }
        return !HeaderBlock::listHas($connection, 'close');
    }
}
