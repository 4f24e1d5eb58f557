<?php

declare(strict_types=1);

namespace Weft\Client\Pgsql;

/**
 * Where and how to connect. Immutable: each withX() returns a copy.
 *
 * Built from a URL: `pgsql://user:pass@127.0.0.1:5432/db?connect_timeout=5&sslmode=disable`
 * (schemes pgsql, postgres and postgresql). Query parameters other than the ones Weft reads itself
 * (connect_timeout, decode_json) go to libpq unchanged, so every libpq option works: sslmode,
 * sslrootcert, application_name, options, target_session_attrs, ...
 */
final class Config
{
    public const DEFAULT_PORT = 5432;
    public const DEFAULT_CONNECT_TIMEOUT = 10.0;

    /** @param array<string, string> $options extra libpq connection parameters */
    private function __construct(
        public readonly string $host = '127.0.0.1',
        public readonly int $port = self::DEFAULT_PORT,
        public readonly string $user = 'postgres',
        public readonly ?string $password = null,
        public readonly ?string $database = null,
        public readonly float $connectTimeout = self::DEFAULT_CONNECT_TIMEOUT,
        public readonly bool $decodeJson = false,
        public readonly array $options = [],
    ) {
    }

    public static function defaults(): self
    {
        return new self();
    }

    /** @throws \InvalidArgumentException for a malformed URL or an unknown scheme */
    public static function fromUrl(string $url): self
    {
        $parts = \parse_url($url);
        if ($parts === false || !isset($parts['scheme'], $parts['host'])) {
            throw new \InvalidArgumentException(\sprintf('Invalid PostgreSQL URL "%s"', self::redact($url)));
        }
        if (!\in_array(\strtolower($parts['scheme']), ['pgsql', 'postgres', 'postgresql'], true)) {
            throw new \InvalidArgumentException(\sprintf(
                'Invalid PostgreSQL URL "%s": the scheme must be pgsql://, postgres:// or postgresql://',
                self::redact($url),
            ));
        }
        $query = [];
        \parse_str($parts['query'] ?? '', $query);
        $config = new self(
            host: \trim(\rawurldecode($parts['host']), '[]'),
            port: $parts['port'] ?? self::DEFAULT_PORT,
            user: isset($parts['user']) ? \rawurldecode($parts['user']) : 'postgres',
            password: isset($parts['pass']) ? \rawurldecode($parts['pass']) : null,
            database: isset($parts['path']) && \strlen($parts['path']) > 1 ? \rawurldecode(\substr($parts['path'], 1)) : null,
        );
        foreach ($query as $key => $value) {
            if (!\is_string($value)) {
                throw new \InvalidArgumentException(\sprintf('Invalid PostgreSQL URL parameter "%s"', $key));
            }
            $config = match ((string) $key) {
                'connect_timeout' => $config->withConnectTimeout((float) $value),
                'decode_json' => $config->withDecodeJson(\filter_var($value, \FILTER_VALIDATE_BOOLEAN)),
                default => $config->withOption((string) $key, $value),
            };
        }
        return $config;
    }

    public function withHost(string $host, int $port = self::DEFAULT_PORT): self
    {
        return $this->copy(['host' => $host, 'port' => $port]);
    }

    public function withUser(string $user, ?string $password = null): self
    {
        return $this->copy(['user' => $user, 'password' => $password]);
    }

    public function withDatabase(?string $database): self
    {
        return $this->copy(['database' => $database]);
    }

    /** Seconds for the whole connection setup (TCP, TLS, authentication); enforced by Weft, not libpq. */
    public function withConnectTimeout(float $seconds): self
    {
        if ($seconds <= 0) {
            throw new \InvalidArgumentException('The connect timeout must be positive');
        }
        return $this->copy(['connectTimeout' => $seconds]);
    }

    /** Whether json and jsonb columns come back decoded (arrays) instead of as JSON text. */
    public function withDecodeJson(bool $decode = true): self
    {
        return $this->copy(['decodeJson' => $decode]);
    }

    /** Any libpq connection parameter (https://www.postgresql.org/docs/current/libpq-connect.html). */
    public function withOption(string $name, string $value): self
    {
        if (!\preg_match('/^[a-z_]+$/', $name)) {
            throw new \InvalidArgumentException(\sprintf('Invalid libpq parameter name "%s"', $name));
        }
        $options = $this->options;
        $options[$name] = $value;
        return $this->copy(['options' => $options]);
    }

    /** The libpq conninfo string ("host='...' port='...' ..."). */
    public function toConnectionString(): string
    {
        $params = ['host' => $this->host, 'port' => (string) $this->port, 'user' => $this->user];
        if ($this->password !== null) {
            $params['password'] = $this->password;
        }
        if ($this->database !== null) {
            $params['dbname'] = $this->database;
        }
        // libpq only enforces its own connect_timeout in blocking mode; it is passed on for the
        // per-address timeout it still applies, Weft enforces the total.
        $params['connect_timeout'] = (string) \max(1, (int) \ceil($this->connectTimeout));
        $params = $this->options + $params;
        $parts = [];
        foreach ($params as $key => $value) {
            $parts[] = $key . "='" . \addcslashes($value, "'\\") . "'";
        }
        return \implode(' ', $parts);
    }

    /** "host:port", for messages. */
    public function address(): string
    {
        return (\str_contains($this->host, ':') ? "[{$this->host}]" : $this->host) . ':' . $this->port;
    }

    private function copy(array $changes): self
    {
        $values = \get_object_vars($this);
        return new self(...\array_merge($values, $changes));
    }

    private static function redact(string $url): string
    {
        return (string) \preg_replace('#(://[^:/@]*:)[^@/]*@#', '$1***@', $url);
    }
}
