<?php

declare(strict_types=1);

namespace Weft\Client\Http;

/** An absolute http(s) URL, split the way a request needs it. */
final class Url
{
    private function __construct(
        public readonly string $scheme,
        public readonly string $host,
        public readonly int $port,
        /** Path and query as sent in the request line ("/a/b?c=d"). */
        public readonly string $target,
        public readonly ?string $user = null,
        public readonly ?string $password = null,
    ) {
    }

    /** @throws \InvalidArgumentException for anything but an absolute http:// or https:// URL */
    public static function parse(string $url): self
    {
        $parts = \parse_url($url);
        if ($parts === false || !isset($parts['scheme'], $parts['host']) || $parts['host'] === '') {
            throw new \InvalidArgumentException(\sprintf('Invalid URL "%s": an absolute http:// or https:// URL is needed', self::redact($url)));
        }
        $scheme = \strtolower($parts['scheme']);
        if ($scheme !== 'http' && $scheme !== 'https') {
            throw new \InvalidArgumentException(\sprintf('Unsupported URL scheme "%s" in "%s"', $scheme, self::redact($url)));
        }
        if (\strpbrk($url, "\r\n\0 \t") !== false) {
            throw new \InvalidArgumentException('Invalid URL: it contains whitespace or control characters');
        }
        $path = $parts['path'] ?? '';
        $target = ($path === '' ? '/' : $path) . (isset($parts['query']) ? '?' . $parts['query'] : '');
        return new self(
            $scheme,
            \strtolower(\trim($parts['host'], '[]')),
            $parts['port'] ?? ($scheme === 'https' ? 443 : 80),
            $target[0] === '/' ? $target : '/' . $target,
            isset($parts['user']) ? \rawurldecode($parts['user']) : null,
            isset($parts['pass']) ? \rawurldecode($parts['pass']) : null,
        );
    }

    /** Resolves a Location value (absolute, scheme-relative, absolute-path or relative) against this URL. */
    public function resolve(string $reference): self
    {
        $reference = \trim($reference);
        if (\preg_match('#^[a-z][a-z0-9+.-]*:#i', $reference) === 1) {
            return self::parse($reference);
        }
        if (\str_starts_with($reference, '//')) {
            return self::parse($this->scheme . ':' . $reference);
        }
        $base = $this->scheme . '://' . $this->authority();
        $reference = (string) \preg_replace('/#.*$/s', '', $reference);
        if ($reference === '') {
            return self::parse($base . $this->target);
        }
        if ($reference[0] === '/') {
            return self::parse($base . self::removeDotSegments($reference));
        }
        $path = \strstr($this->target, '?', true);
        $path = $path === false ? $this->target : $path;
        if ($reference[0] === '?') {
            return self::parse($base . $path . $reference);
        }
        $directory = \substr($path, 0, (int) \strrpos($path, '/') + 1);
        return self::parse($base . self::removeDotSegments($directory . $reference));
    }

    /** "scheme://host:port": connections are shared per origin. */
    public function origin(): string
    {
        return $this->scheme . '://' . $this->hostForUrl() . ':' . $this->port;
    }

    /** The Host header value: the port only when it is not the scheme's default. */
    public function authority(): string
    {
        $default = $this->scheme === 'https' ? 443 : 80;
        return $this->hostForUrl() . ($this->port === $default ? '' : ':' . $this->port);
    }

    /** What Socket::connect() takes. */
    public function socketAddress(): string
    {
        return $this->hostForUrl() . ':' . $this->port;
    }

    public function isHttps(): bool
    {
        return $this->scheme === 'https';
    }

    /** The URL without credentials, for messages and Response::url(). */
    public function __toString(): string
    {
        return $this->scheme . '://' . $this->authority() . $this->target;
    }

    private function hostForUrl(): string
    {
        return \str_contains($this->host, ':') ? '[' . $this->host . ']' : $this->host;
    }

    private static function removeDotSegments(string $target): string
    {
        $query = '';
        $mark = \strpos($target, '?');
        if ($mark !== false) {
            $query = \substr($target, $mark);
            $target = \substr($target, 0, $mark);
        }
        if (!\str_contains($target, '.')) {
            return $target . $query;
        }
        $out = [];
        $segments = \explode('/', $target);
        $last = \count($segments) - 1;
        foreach ($segments as $i => $segment) {
            if ($segment === '..') {
                if (\count($out) > 1) {
                    \array_pop($out);
                }
                if ($i === $last) {
                    $out[] = '';
                }
            } elseif ($segment === '.') {
                if ($i === $last) {
                    $out[] = '';
                }
            } else {
                $out[] = $segment;
            }
        }
        $path = \implode('/', $out);
        return ($path === '' || $path[0] !== '/' ? '/' . $path : $path) . $query;
    }

    private static function redact(string $url): string
    {
        return (string) \preg_replace('#(://[^:/@]*:)[^@/]*@#', '$1***@', $url);
    }
}
