<?php

declare(strict_types=1);

namespace Weft\Http\Message;

/**
 * An HTTP request as the server saw it.
 *
 * Built once per request on the hot path, so the constructor only stores what the parser already
 * has: the header section stays a raw block (see HeaderBlock) and everything derived from it —
 * header map, query, cookies, form, files, JSON — is computed on first use and cached.
 * Immutable from the outside: with*() methods return a modified copy.
 */
final class Request
{
    /** @var array<string, list<string>>|null */
    private ?array $headerMap = null;
    /** @var array<array-key, mixed>|null */
    private ?array $query = null;
    /** @var array<string, string>|null */
    private ?array $cookies = null;
    /** @var array<array-key, mixed>|null */
    private ?array $form = null;
    /** @var array<array-key, mixed>|null */
    private ?array $files = null;
    private mixed $json = null;
    private bool $jsonDecoded = false;
    /** @var array<string, mixed> */
    private array $attributes = [];
    /** Whether a trusted proxy described the client (withForwardedClient()); then $peerAddress is the proxy's address. */
    private bool $forwarded = false;
    private ?string $peerAddress = null;
    private string $scheme = 'http';
    /** The header block keepAlive() looked at last ("\0": none, never a block), and its Connection field. */
    private static string $connectionBlock = "\0";
    private static ?string $connectionValue = null;

    /**
     * The parser's constructor. Outside the parser use Request::create(), which validates.
     *
     * @param string $headerBlock validated header section in HeaderBlock form ("\r\nName: value"...)
     * @param string $trailerBlock chunked trailer section, same form
     *
     * Its properties are private and never written after this (the with*() methods change clones), but
     * not declared readonly: the tracing JIT cannot compile an assignment to a readonly property and
     * leaves the trace there, and the side exit, taken for every request the PHP parser builds, ends up
     * blacklisted (the rest of the constructor, of the parser's call and of HttpSession::pump() then ran
     * in the interpreter: ~1,000 instructions a request, callgrind, pure PHP).
     */
    public function __construct(
        private string $method,
        private string $target,
        private string $headerBlock = '',
        private string $body = '',
        private string $version = '1.1',
        private ?string $remoteAddress = null,
        private string $trailerBlock = '',
    ) {
    }

    /**
     * @param array<string, string|int|float|list<string|int|float>> $headers name => value(s), any case
     * @throws \InvalidArgumentException on header names or values that could not have come off the wire
     */
    public static function create(
        string $method,
        string $target,
        array $headers = [],
        string $body = '',
        string $version = '1.1',
    ): self {
        if (str_starts_with($version, 'HTTP/')) {
            $version = substr($version, 5);
        }
        return new self($method, $target, HeaderBlock::fromArray($headers), $body, $version);
    }

    public function method(): string
    {
        return $this->method;
    }

    /** The request-target exactly as sent: "/path?query", "http://host/path", "*" or "host:port". */
    public function target(): string
    {
        return $this->target;
    }

    /**
     * The path, still percent-encoded, without the query. For an absolute-form target this is the
     * URL's path ("/" when it has none); "*" for "OPTIONS *"; "" for CONNECT's authority-form.
     */
    public function path(): string
    {
        $target = $this->target;
        if ($target !== '' && $target[0] === '/') {
            $q = strpos($target, '?');
            return $q === false ? $target : substr($target, 0, $q);
        }
        if ($target === '*') {
            return '*';
        }
        $scheme = strpos($target, '://');
        if ($scheme === false) {
            return '';
        }
        $end = strcspn($target, '?#', $scheme + 3);
        $slash = strpos(substr($target, $scheme + 3, $end), '/');
        return $slash === false ? '/' : substr($target, $scheme + 3 + $slash, $end - $slash);
    }

    /** The raw query string, without "?"; "" when there is none. */
    public function queryString(): string
    {
        $q = strpos($this->target, '?');
        if ($q === false) {
            return '';
        }
        $hash = strpos($this->target, '#', $q);
        return $hash === false ? substr($this->target, $q + 1) : substr($this->target, $q + 1, $hash - $q - 1);
    }

    /** @return array<array-key, mixed> the query parsed with parse_str semantics, like $_GET */
    public function query(): array
    {
        if ($this->query === null) {
            $this->query = [];
            $string = $this->queryString();
            if ($string !== '') {
                parse_str($string, $this->query);
            }
        }
        return $this->query;
    }

    public function queryParam(string $name, mixed $default = null): mixed
    {
        return $this->query()[$name] ?? $default;
    }

    /** "1.0" or "1.1" off the wire; whatever SERVER_PROTOCOL said under FPM. */
    public function version(): string
    {
        return $this->version;
    }

    /** Case-insensitive; repeated fields are joined with ", ". */
    public function header(string $name): ?string
    {
        if ($this->headerMap === null) {
            return HeaderBlock::get($this->headerBlock, $name);
        }
        $values = $this->headerMap[strtolower($name)] ?? null;
        if ($values === null) {
            return null;
        }
        return \count($values) === 1 ? $values[0] : implode(', ', $values);
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

    /** @return array<string, list<string>> trailer fields of a chunked body, lowercase names; never merged into headers() */
    public function trailers(): array
    {
        return HeaderBlock::parse($this->trailerBlock);
    }

    /**
     * Whether the client wants the connection kept open after this request: HTTP/1.1 unless
     * "Connection: close", HTTP/1.0 only with "Connection: keep-alive". The server combines this
     * with the response in ResponseEncoder::keepAlive().
     */
    public function keepAlive(): bool
    {
        // Runs for every request the server answers, so the common shapes ("keep-alive", "close",
        // no field at all) are decided here without the general list parsing. A client sends the same
        // field lines request after request (and the PHP parser then hands the very same string): the
        // Connection field of the last block looked at is kept, sparing the search (a lower-cased copy
        // of the block) for the next one.
        $block = $this->headerBlock;
        if ($block === self::$connectionBlock) {
            $connection = self::$connectionValue;
        } else {
            $connection = HeaderBlock::get($block, 'connection');
            self::$connectionBlock = $block;
            self::$connectionValue = $connection;
        }
        if ($connection === null) {
            return $this->version !== '1.0';
        }
        if (\strlen($connection) === 10 && strcasecmp($connection, 'keep-alive') === 0) {
            return true;
        }
        if ($this->version === '1.0') {
            return HeaderBlock::listHas($connection, 'keep-alive');
        }
        return !HeaderBlock::listHas($connection, 'close');
    }

    /**
     * @return array<string, string> cookie name => value. Values are rawurldecode()d ("+" stays "+",
     *         unlike $_COOKIE, so base64 values survive); the first of two equal names wins, as in PHP.
     */
    public function cookies(): array
    {
        if ($this->cookies !== null) {
            return $this->cookies;
        }
        $cookies = [];
        // HTTP/1.1 clients send one Cookie field, but a proxy may have split it; those join with ';'.
        foreach (HeaderBlock::values($this->headerBlock, 'cookie') as $field) {
            foreach (explode(';', $field) as $pair) {
                $eq = strpos($pair, '=');
                $name = trim($eq === false ? $pair : substr($pair, 0, $eq), " \t");
                if ($name === '' || isset($cookies[$name])) {
                    continue;
                }
                $value = $eq === false ? '' : trim(substr($pair, $eq + 1), " \t");
                if (\strlen($value) >= 2 && $value[0] === '"' && $value[-1] === '"') {
                    $value = substr($value, 1, -1);
                }
                $cookies[$name] = rawurldecode($value);
            }
        }
        return $this->cookies = $cookies;
    }

    public function cookie(string $name): ?string
    {
        return $this->cookies()[$name] ?? null;
    }

    public function body(): string
    {
        return $this->body;
    }

    /** The media type of Content-Type, lowercased, without parameters; "" when absent. */
    public function contentType(): string
    {
        $type = HeaderBlock::get($this->headerBlock, 'content-type');
        if ($type === null) {
            return '';
        }
        $semicolon = strpos($type, ';');
        return strtolower(trim($semicolon === false ? $type : substr($type, 0, $semicolon), " \t"));
    }

    /**
     * @return array<array-key, mixed> fields of an application/x-www-form-urlencoded or
     *         multipart/form-data body, nested like $_POST; [] for any other body
     * @throws BadRequest on a broken multipart body
     */
    public function form(): array
    {
        if ($this->form === null) {
            $this->parseForm();
        }
        return $this->form;
    }

    /**
     * @return array<array-key, UploadedFile|array<array-key, mixed>> files of a multipart/form-data
     *         body by field name, nested like PSR-7 getUploadedFiles() for names such as "docs[]"
     * @throws BadRequest on a broken multipart body
     */
    public function files(): array
    {
        if ($this->files === null) {
            $this->parseForm();
        }
        return $this->files;
    }

    /**
     * The body decoded as JSON (objects as associative arrays); null for an empty body.
     *
     * @throws BadRequest when the body is not valid JSON
     */
    public function json(): mixed
    {
        if (!$this->jsonDecoded) {
            try {
                $this->json = $this->body === '' ? null : json_decode($this->body, true, 512, JSON_THROW_ON_ERROR);
            } catch (\JsonException $e) {
                throw BadRequest::invalidJson($e);
            }
            $this->jsonDecoded = true;
        }
        return $this->json;
    }

    /** The peer's IP address without port ("127.0.0.1", "::1"); null when unknown (Unix sockets). */
    public function remoteAddress(): ?string
    {
        return $this->remoteAddress;
    }

    public function withRemoteAddress(?string $address): self
    {
        $clone = clone $this;
        $clone->remoteAddress = $address;
        return $clone;
    }

    /**
     * The address of the connection's other end: the proxy when a trusted one named the client
     * (--trusted-proxies), else the same as remoteAddress().
     */
    public function peerAddress(): ?string
    {
        return $this->forwarded ? $this->peerAddress : $this->remoteAddress;
    }

    /** Whether a trusted proxy's forwarding fields made remoteAddress() and scheme() (withForwardedClient()). */
    public function viaTrustedProxy(): bool
    {
        return $this->forwarded;
    }

    /**
     * "https" when the request came over TLS (--tls-cert), or when a trusted proxy (--trusted-proxies)
     * says the client came over HTTPS; "http" otherwise.
     */
    public function scheme(): string
    {
        return $this->scheme;
    }

    /**
     * The request as a trusted proxy describes its client: remoteAddress() becomes $address,
     * peerAddress() keeps the proxy's. Weft\Http\Server\TrustedProxies calls it; an application that
     * resolves proxies itself may too.
     *
     * @param 'http'|'https' $scheme
     */
    public function withForwardedClient(string $address, string $scheme = 'http'): self
    {
        if ($scheme !== 'http' && $scheme !== 'https') {
            throw new \InvalidArgumentException("Unknown scheme '$scheme' (http or https)");
        }
        $clone = clone $this;
        $clone->peerAddress = $this->peerAddress();
        $clone->forwarded = true;
        $clone->remoteAddress = $address;
        $clone->scheme = $scheme;
        return $clone;
    }

    /**
     * The request as it arrived over TLS at Weft itself (--tls-cert): scheme() "https", so the PSR-7
     * bridge and the framework bridges set HTTPS=on as they do for a trusted proxy's X-Forwarded-Proto.
     *
     * @internal called by the HTTP session of a TLS connection
     */
    public function overTls(): self
    {
        $clone = clone $this;
        $clone->scheme = 'https';
        return $clone;
    }

    public function attribute(string $name, mixed $default = null): mixed
    {
        return \array_key_exists($name, $this->attributes) ? $this->attributes[$name] : $default;
    }

    /** @return array<string, mixed> */
    public function attributes(): array
    {
        return $this->attributes;
    }

    public function withAttribute(string $name, mixed $value): self
    {
        $clone = clone $this;
        $clone->attributes[$name] = $value;
        return $clone;
    }

    public function withoutAttribute(string $name): self
    {
        $clone = clone $this;
        unset($clone->attributes[$name]);
        return $clone;
    }

    private function parseForm(): void
    {
        $form = [];
        $files = [];
        $type = $this->contentType();
        if ($type === 'application/x-www-form-urlencoded') {
            if ($this->body !== '') {
                parse_str($this->body, $form);
            }
        } elseif ($type === 'multipart/form-data') {
            // Assigned only on success, so a BadRequest is thrown again on the next call.
            [$form, $files] = MultipartParser::parse($this->body, (string) $this->header('content-type'));
        }
        $this->form = $form;
        $this->files = $files;
    }
}
