<?php

declare(strict_types=1);

namespace Weft\Bench;

/** The outside programs the benchmarks use, where they are, and the Debian package that has each. */
final class Tools
{
    /** tool => [candidate binaries, Debian package] */
    public const KNOWN = [
        'wrk' => [['wrk'], 'wrk'],
        'ab' => [['ab'], 'apache2-utils'],
        'nginx' => [['nginx'], 'nginx'],
        'php-fpm' => [['php-fpm' . \PHP_MAJOR_VERSION . '.' . \PHP_MINOR_VERSION, 'php-fpm'], 'php' . \PHP_MAJOR_VERSION . '.' . \PHP_MINOR_VERSION . '-fpm'],
        'mariadb' => [['mariadbd', 'mysqld'], 'mariadb-server'],
        'taskset' => [['taskset'], 'util-linux'],
        'setsid' => [['setsid'], 'util-linux'],
    ];

    /** @param array<string, ?string> $paths tool => path or null */
    public function __construct(private readonly array $paths)
    {
    }

    public static function detect(): self
    {
        $dirs = \array_unique([...\explode(':', (string) \getenv('PATH')), '/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']);
        $paths = [];
        foreach (self::KNOWN as $tool => [$binaries]) {
            $paths[$tool] = null;
            foreach ($binaries as $binary) {
                foreach ($dirs as $dir) {
                    if ($dir !== '' && \is_file("$dir/$binary") && \is_executable("$dir/$binary")) {
                        $paths[$tool] = "$dir/$binary";
                        break 2;
                    }
                }
            }
        }
        return new self($paths);
    }

    public function has(string $tool): bool
    {
        return ($this->paths[$tool] ?? null) !== null;
    }

    public function path(string $tool): ?string
    {
        return $this->paths[$tool] ?? null;
    }

    public static function package(string $tool): string
    {
        return self::KNOWN[$tool][1] ?? $tool;
    }

    /** The line the report shows for a missing tool. */
    public static function missing(string $tool): string
    {
        return "$tool not installed (Debian package " . self::package($tool) . ')';
    }

    /** @return array<string, ?string> */
    public function toArray(): array
    {
        return $this->paths;
    }
}
