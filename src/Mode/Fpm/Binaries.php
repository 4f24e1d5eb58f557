<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

/** Where nginx and php-fpm are. php-fpm must be the same PHP minor version as this CLI. */
final class Binaries
{
    private function __construct(public readonly string $nginx, public readonly string $phpFpm)
    {
    }

    /**
     * @param array<string, string> $env WEFT_NGINX / WEFT_PHP_FPM override the search
     * @throws MissingBinary
     */
    public static function find(array $env = []): self
    {
        $fpm = 'php-fpm' . \PHP_MAJOR_VERSION . '.' . \PHP_MINOR_VERSION;
        return new self(
            self::locate('nginx', 'nginx', $env['WEFT_NGINX'] ?? null, ['/usr/sbin/nginx', 'nginx']),
            self::locate($fpm, 'php' . \PHP_MAJOR_VERSION . '.' . \PHP_MINOR_VERSION . '-fpm', $env['WEFT_PHP_FPM'] ?? null, ["/usr/sbin/$fpm", $fpm, '/usr/sbin/php-fpm', 'php-fpm']),
        );
    }

    /** @param list<string> $candidates absolute paths, or names looked up in PATH */
    private static function locate(string $program, string $package, ?string $override, array $candidates): string
    {
        if ($override !== null && $override !== '') {
            $candidates = [$override];
        }
        foreach ($candidates as $candidate) {
            if (\str_contains($candidate, '/')) {
                if (\is_file($candidate) && \is_executable($candidate)) {
                    return $candidate;
                }
                continue;
            }
            foreach (\explode(':', (string) \getenv('PATH') ?: '/usr/local/bin:/usr/bin:/bin') as $dir) {
                $path = \rtrim($dir, '/') . '/' . $candidate;
                if ($dir !== '' && \is_file($path) && \is_executable($path)) {
                    return $path;
                }
            }
        }
        throw MissingBinary::named($program, $package, $candidates);
    }
}
