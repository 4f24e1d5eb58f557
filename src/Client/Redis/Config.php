<?php

declare(strict_types=1);

namespace Weft\Client\Redis;

/**
 * Where and how to connect. Immutable: each withX() returns a copy.
 *
 * URL forms: `redis://[[user]:password@]host[:port][/db][?protocol=3&timeout=2]`, `rediss://...` (TLS),
 * `unix:///path/to/redis.sock[?db=2]`. Query parameters: protocol (2 or 3), timeout (connect and reply
 * timeout, seconds), connect_timeout, read_timeout, db. Unknown parameters are an error, so a typo
 * never goes unnoticed.
 */
final class Config
{
    public const DEFAULT_PORT = 6379;
    public const DEFAULT_CONNECT_TIMEOUT = 5.0;

    private function __construct(
        public readonly string $host = '127.0.0.1',
        public readonly int $port = self::DEFAULT_PORT,
        /** A Unix socket path; when set, host and port are ignored. */
        public readonly ?string $socketPath = null,
        public readonly ?string $username = null,
        public readonly ?string $password = null,
        public readonly int $database = 0,
        /** 2 (RESP2, the server's default) or 3 (RESP3, negotiated with HELLO 3). */
        public readonly int $protocol = 2,
        public readonly float $connectTimeout = self::DEFAULT_CONNECT_TIMEOUT,
        /** How long to wait for a reply; null waits as long as it takes. Blocking commands add their own wait. */
        public readonly ?float $timeout = null,
        public readonly bool $tls = false,
    ) {
    }

    public static function defaults(): self
    {
        return new self();
    }

    public static function fromUrl(string $url): self
    {
        if (\str_starts_with(\strtolower($url), 'unix://')) {
            // parse_url() refuses "unix:///path": take it apart by hand.
            [$path, $query] = \explode('?', \substr($url, 7), 2) + [1 => ''];
            $parts = ['scheme' => 'unix', 'path' => $path, 'query' => $query];
        } else {
            $parts = \parse_url($url);
        }
        if ($parts === false || !isset($parts['scheme'])) {
            throw new \InvalidArgumentException("Invalid Redis URL '$url'");
        }
        $scheme = \strtolower($parts['scheme']);
        $config = new self();
        if ($scheme === 'unix') {
            $path = $parts['path'] ?? '';
            if ($path === '') {
                throw new \InvalidArgumentException("Invalid Redis URL '$url': no socket path");
            }
            $config = $config->withSocketPath($path);
        } elseif ($scheme === 'redis' || $scheme === 'rediss') {
            $config = $config->withHost(\trim($parts['host'] ?? '127.0.0.1', '[]'));
            if (isset($parts['port'])) {
                $config = $config->withPort($parts['port']);
            }
            if ($scheme === 'rediss') {
                $config = $config->withTls();
            }
            $path = \trim($parts['path'] ?? '', '/');
            if ($path !== '') {
                if (!\ctype_digit($path)) {
                    throw new \InvalidArgumentException("Invalid Redis URL '$url': the path must be a database number");
                }
                $config = $config->withDatabase((int) $path);
            }
        } else {
            throw new \InvalidArgumentException("Invalid Redis URL '$url': the scheme must be redis, rediss or unix");
        }

        $user = isset($parts['user']) ? \rawurldecode($parts['user']) : null;
        $password = isset($parts['pass']) ? \rawurldecode($parts['pass']) : null;
        if ($password !== null) {
            $config = $config->withAuth($password, $user === '' ? null : $user);
        } elseif ($user !== null && $user !== '') {
            throw new \InvalidArgumentException(
                "Invalid Redis URL: a user name needs a password (redis://user:password@host, or redis://:password@host)",
            );
        }

        \parse_str($parts['query'] ?? '', $query);
        foreach ($query as $name => $value) {
            if (!\is_string($value) || $value === '') {
                throw new \InvalidArgumentException("Invalid Redis URL '$url': parameter '$name' needs a value");
            }
            $config = match ($name) {
                'protocol' => $config->withProtocol(self::intParam($name, $value)),
                'db' => $config->withDatabase(self::intParam($name, $value)),
                'timeout' => $config->withConnectTimeout(self::floatParam($name, $value))->withTimeout(self::floatParam($name, $value)),
                'connect_timeout' => $config->withConnectTimeout(self::floatParam($name, $value)),
                'read_timeout' => $config->withTimeout(self::floatParam($name, $value)),
                default => throw new \InvalidArgumentException("Invalid Redis URL '$url': unknown parameter '$name'"),
            };
        }
        return $config;
    }

    public function withHost(string $host): self
    {
        return $this->with(host: $host, socketPath: null);
    }

    public function withPort(int $port): self
    {
        if ($port < 1 || $port > 65535) {
            throw new \InvalidArgumentException("Invalid port $port");
        }
        return $this->with(port: $port);
    }

    public function withSocketPath(?string $path): self
    {
        return $this->with(socketPath: $path);
    }

    /** AUTH with a password only (the default user), or with a user name and password (ACL). */
    public function withAuth(?string $password, ?string $username = null): self
    {
        if ($password === null && $username !== null) {
            throw new \InvalidArgumentException('A user name needs a password');
        }
        return $this->with(username: $username, password: $password, setAuth: true);
    }

    public function withDatabase(int $database): self
    {
        if ($database < 0) {
            throw new \InvalidArgumentException('The database number cannot be negative');
        }
        return $this->with(database: $database);
    }

    public function withProtocol(int $protocol): self
    {
        if ($protocol !== 2 && $protocol !== 3) {
            throw new \InvalidArgumentException("Unsupported RESP protocol version $protocol (2 or 3)");
        }
        return $this->with(protocol: $protocol);
    }

    public function withConnectTimeout(float $seconds): self
    {
        if ($seconds <= 0) {
            throw new \InvalidArgumentException('The connect timeout must be positive');
        }
        return $this->with(connectTimeout: $seconds);
    }

    /** @param null|float $seconds how long to wait for a reply (null: no limit) */
    public function withTimeout(?float $seconds): self
    {
        if ($seconds !== null && $seconds <= 0) {
            throw new \InvalidArgumentException('The reply timeout must be positive (or null)');
        }
        return $this->with(timeout: $seconds, setTimeout: true);
    }

    public function withTls(bool $tls = true): self
    {
        return $this->with(tls: $tls);
    }

    /** The socket address for Weft\Socket\Socket::connect(). */
    public function address(): string
    {
        if ($this->socketPath !== null) {
            return 'unix://' . $this->socketPath;
        }
        return (\str_contains($this->host, ':') ? "[{$this->host}]" : $this->host) . ':' . $this->port;
    }

    /** The URL without the password, for messages and logs. */
    public function describe(): string
    {
        $user = $this->username !== null ? \rawurlencode($this->username) . '@' : ($this->password !== null ? ':***@' : '');
        if ($this->socketPath !== null) {
            return "unix://{$this->socketPath}?db={$this->database}";
        }
        return ($this->tls ? 'rediss' : 'redis') . "://$user" . $this->address() . "/{$this->database}";
    }

    private function with(
        ?string $host = null,
        ?int $port = null,
        ?string $socketPath = '',
        ?string $username = null,
        ?string $password = null,
        bool $setAuth = false,
        ?int $database = null,
        ?int $protocol = null,
        ?float $connectTimeout = null,
        ?float $timeout = null,
        bool $setTimeout = false,
        ?bool $tls = null,
    ): self {
        return new self(
            $host ?? $this->host,
            $port ?? $this->port,
            $socketPath === '' ? $this->socketPath : $socketPath,
            $setAuth ? $username : $this->username,
            $setAuth ? $password : $this->password,
            $database ?? $this->database,
            $protocol ?? $this->protocol,
            $connectTimeout ?? $this->connectTimeout,
            $setTimeout ? $timeout : $this->timeout,
            $tls ?? $this->tls,
        );
    }

    private static function intParam(string $name, string $value): int
    {
        if (!\ctype_digit($value)) {
            throw new \InvalidArgumentException("Redis URL parameter '$name' must be a whole number, got '$value'");
        }
        return (int) $value;
    }

    private static function floatParam(string $name, string $value): float
    {
        if (!\is_numeric($value)) {
            throw new \InvalidArgumentException("Redis URL parameter '$name' must be a number of seconds, got '$value'");
        }
        return (float) $value;
    }
}
