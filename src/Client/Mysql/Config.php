<?php

declare(strict_types=1);

namespace Weft\Client\Mysql;

/**
 * Where and how to connect. Immutable: each withX() returns a copy.
 *
 *     Config::fromUrl('mysql://user:pass@127.0.0.1:3306/db?charset=utf8mb4&tls=1&connect_timeout=5')
 *
 * URL query options: charset, connect_timeout (seconds), tls (0/1), tls_verify (0/1: check the
 * server's certificate and name, default 1), tls_ca (CA file), multi_statements (0/1), socket (path of
 * a Unix socket instead of host:port), server_public_key (PEM file, for caching_sha2_password over
 * plain TCP without asking the server for its key). User, password and database are percent-decoded.
 */
final class Config
{
    public const DEFAULT_HOST = '127.0.0.1';
    public const DEFAULT_PORT = 3306;
    public const DEFAULT_CHARSET = 'utf8mb4';
    public const DEFAULT_CONNECT_TIMEOUT = 10.0;

    /**
     * @param array<string, mixed> $tlsOptions extra stream context "ssl" options (cafile, verify_peer, ...)
     */
    public function __construct(
        public readonly string $host = self::DEFAULT_HOST,
        public readonly int $port = self::DEFAULT_PORT,
        public readonly string $user = 'root',
        #[\SensitiveParameter] public readonly string $password = '',
        public readonly ?string $database = null,
        public readonly string $charset = self::DEFAULT_CHARSET,
        public readonly bool $tls = false,
        public readonly array $tlsOptions = [],
        public readonly float $connectTimeout = self::DEFAULT_CONNECT_TIMEOUT,
        public readonly bool $multiStatements = false,
        public readonly ?string $unixSocket = null,
        public readonly ?string $serverPublicKey = null,
    ) {
        if ($port < 1 || $port > 65535) {
            throw new \InvalidArgumentException("Invalid MySQL port $port");
        }
        if ($connectTimeout <= 0) {
            throw new \InvalidArgumentException('The connect timeout must be positive');
        }
        if (!\preg_match('/^[A-Za-z0-9_]+$/', $charset)) {
            throw new \InvalidArgumentException("Invalid charset name \"$charset\"");
        }
    }

    public static function fromUrl(#[\SensitiveParameter] string $url): self
    {
        $parts = \parse_url($url);
        if ($parts === false || !isset($parts['scheme'])) {
            throw new \InvalidArgumentException('Invalid MySQL URL (expected mysql://user:password@host:port/database?options)');
        }
        $scheme = \strtolower($parts['scheme']);
        if ($scheme !== 'mysql' && $scheme !== 'mariadb') {
            throw new \InvalidArgumentException("Unsupported URL scheme \"$scheme\" for MySQL (use mysql:// or mariadb://)");
        }
        \parse_str($parts['query'] ?? '', $query);
        $known = ['charset', 'connect_timeout', 'tls', 'tls_verify', 'tls_ca', 'multi_statements', 'socket', 'server_public_key'];
        foreach (\array_keys($query) as $name) {
            if (!\in_array($name, $known, true)) {
                throw new \InvalidArgumentException(\sprintf('Unknown MySQL URL option "%s" (known: %s)', $name, \implode(', ', $known)));
            }
        }
        $tlsOptions = [];
        if (isset($query['tls_verify']) && !self::flag($query['tls_verify'])) {
            $tlsOptions += ['verify_peer' => false, 'verify_peer_name' => false, 'allow_self_signed' => true];
        }
        if (isset($query['tls_ca'])) {
            $tlsOptions['cafile'] = (string) $query['tls_ca'];
        }
        $database = isset($parts['path']) ? \rawurldecode(\ltrim($parts['path'], '/')) : '';
        $publicKey = null;
        if (isset($query['server_public_key'])) {
            $publicKey = @\file_get_contents((string) $query['server_public_key']);
            if ($publicKey === false) {
                throw new \InvalidArgumentException("Cannot read the server public key file {$query['server_public_key']}");
            }
        }
        return new self(
            host: isset($parts['host']) ? \trim($parts['host'], '[]') : self::DEFAULT_HOST,
            port: $parts['port'] ?? self::DEFAULT_PORT,
            user: isset($parts['user']) ? \rawurldecode($parts['user']) : 'root',
            password: isset($parts['pass']) ? \rawurldecode($parts['pass']) : '',
            database: $database === '' ? null : $database,
            charset: (string) ($query['charset'] ?? self::DEFAULT_CHARSET),
            tls: isset($query['tls']) && self::flag($query['tls']),
            tlsOptions: $tlsOptions,
            connectTimeout: isset($query['connect_timeout']) ? (float) $query['connect_timeout'] : self::DEFAULT_CONNECT_TIMEOUT,
            multiStatements: isset($query['multi_statements']) && self::flag($query['multi_statements']),
            unixSocket: isset($query['socket']) ? (string) $query['socket'] : null,
            serverPublicKey: $publicKey,
        );
    }

    /** What Weft\Socket\Socket::connect() takes: "host:port", "[v6]:port" or "unix:///path". */
    public function address(): string
    {
        if ($this->unixSocket !== null) {
            return 'unix://' . $this->unixSocket;
        }
        return (\str_contains($this->host, ':') ? "[{$this->host}]" : $this->host) . ':' . $this->port;
    }

    public function withHost(string $host, ?int $port = null): self
    {
        return $this->with(['host' => $host, 'port' => $port ?? $this->port, 'unixSocket' => null]);
    }

    public function withPort(int $port): self
    {
        return $this->with(['port' => $port]);
    }

    public function withUnixSocket(?string $path): self
    {
        return $this->with(['unixSocket' => $path]);
    }

    public function withUser(string $user, #[\SensitiveParameter] ?string $password = null): self
    {
        return $this->with(['user' => $user, 'password' => $password ?? $this->password]);
    }

    public function withPassword(#[\SensitiveParameter] string $password): self
    {
        return $this->with(['password' => $password]);
    }

    public function withDatabase(?string $database): self
    {
        return $this->with(['database' => $database]);
    }

    public function withCharset(string $charset): self
    {
        return $this->with(['charset' => $charset]);
    }

    /** @param array<string, mixed> $options stream context "ssl" options merged over the defaults */
    public function withTls(bool $tls = true, array $options = []): self
    {
        return $this->with(['tls' => $tls, 'tlsOptions' => $options + $this->tlsOptions]);
    }

    public function withConnectTimeout(float $seconds): self
    {
        return $this->with(['connectTimeout' => $seconds]);
    }

    public function withMultiStatements(bool $enabled = true): self
    {
        return $this->with(['multiStatements' => $enabled]);
    }

    public function withServerPublicKey(?string $pem): self
    {
        return $this->with(['serverPublicKey' => $pem]);
    }

    /** @return array<string, mixed> the "ssl" stream context options used for the TLS upgrade */
    public function sslContextOptions(): array
    {
        return $this->tlsOptions + [
            'verify_peer' => true,
            'verify_peer_name' => true,
            'peer_name' => $this->host,
            'SNI_enabled' => true,
        ];
    }

    /** Keeps the password out of var_dump() and print_r() output. */
    public function __debugInfo(): array
    {
        $vars = \get_object_vars($this);
        $vars['password'] = $this->password === '' ? '' : '***';
        return $vars;
    }

    /** @param array<string, mixed> $changes */
    private function with(array $changes): self
    {
        return new self(...\array_merge(\get_object_vars($this), $changes));
    }

    private static function flag(mixed $value): bool
    {
        return \in_array(\strtolower((string) $value), ['1', 'true', 'yes', 'on'], true);
    }
}
