<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

/**
 * Everything fpm mode needs to write its configuration and run nginx and php-fpm. Immutable; the
 * CLI builds it from `bin/weft serve --mode fpm` options. Every path is absolute.
 */
final class FpmSettings
{
    public const DEFAULT_GRACE = 10.0;

    /**
     * @param string $runtimeDir where configuration, sockets, pid files and nginx's temp folders go
     * @param string $user run nginx workers and the php-fpm pool as this user (the current one)
     * @param ?string $logFile where nginx, php-fpm and the front controller log; null: stderr
     * @param bool $upstreamKeepalive keep nginx's connections to php-fpm open between requests
     *        (fastcgi_keep_conn and an upstream keepalive pool); off by default, see NginxConfig
     */
    public function __construct(
        public readonly string $app,
        public readonly string $runtimeDir,
        public readonly string $host = '127.0.0.1',
        public readonly int $port = 8080,
        public readonly int $workers = 1,
        public readonly int $maxRequests = 0,
        public readonly int $maxBody = 8 * 1024 * 1024,
        public readonly bool $opcache = true,
        public readonly ?string $preload = null,
        public readonly ?string $logFile = null,
        public readonly bool $debug = false,
        public readonly float $grace = self::DEFAULT_GRACE,
        public readonly string $user = 'root',
        public readonly string $group = 'root',
        public readonly bool $root = false,
        public readonly string $frontController = __DIR__ . '/front.php',
        public readonly string $autoload = '',
        public readonly string $nginx = '/usr/sbin/nginx',
        public readonly string $phpFpm = '/usr/sbin/php-fpm8.2',
        public readonly bool $upstreamKeepalive = false,
    ) {
        if ($workers < 1) {
            throw new \InvalidArgumentException('fpm mode needs at least 1 worker');
        }
        if ($port < 1 || $port > 65535) {
            throw new \InvalidArgumentException("fpm mode needs a concrete port (1-65535), got $port");
        }
        foreach (['app' => $app, 'runtimeDir' => $runtimeDir, 'frontController' => $frontController, 'preload' => $preload, 'logFile' => $logFile] as $name => $path) {
            if ($path !== null && !\str_starts_with($path, '/')) {
                throw new \InvalidArgumentException("fpm mode: $name must be an absolute path, got '$path'");
            }
        }
    }

    /** "127.0.0.1:8080", "[::1]:8080": the address nginx listens on. */
    public function address(): string
    {
        return (\str_contains($this->host, ':') ? '[' . \trim($this->host, '[]') . ']' : $this->host) . ':' . $this->port;
    }

    /** Where a local client reaches nginx: the wildcard addresses mean loopback. */
    public function connectAddress(): string
    {
        $host = \trim($this->host, '[]');
        $host = match ($host) {
            '0.0.0.0', '' => '127.0.0.1',
            '::' => '::1',
            default => $host,
        };
        return (\str_contains($host, ':') ? "[$host]" : $host) . ':' . $this->port;
    }

    /** The FIFO of PHP's error_log in php-fpm's workers (and php-fpm's own log); every line is tagged. */
    public function logPipe(): string
    {
        return $this->path('log.fifo');
    }

    /**
     * The FIFO of the front controller's own records (without --log-file), passed on as they are. Apart
     * from the error_log FIFO: a PHP warning quoting a client's input can hold a line that looks like a
     * record, and must not be able to pass for one.
     */
    public function recordPipe(): string
    {
        return $this->path('records.fifo');
    }

    public function path(string $name): string
    {
        return $this->runtimeDir . '/' . $name;
    }

    /** php-fpm's socket for the application's requests. */
    public function fpmSocket(): string
    {
        return $this->path('php-fpm.sock');
    }

    /** php-fpm's separate socket for its status page, answered even when every worker is busy. */
    public function fpmStatusSocket(): string
    {
        return $this->path('php-fpm-status.sock');
    }

    /** nginx's second server, for Weft only: readiness probe and php-fpm status. */
    public function internalSocket(): string
    {
        return $this->path('internal.sock');
    }
}
