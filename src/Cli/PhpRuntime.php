<?php

declare(strict_types=1);

namespace Weft\Cli;

/** The PHP settings a resident Weft server wants, and how `serve` gets them when the CLI lacks them. */
final class PhpRuntime
{
    public const OPCACHE_FLAGS = [
        '-d', 'opcache.enable_cli=1',
        '-d', 'opcache.jit=tracing',
        '-d', 'opcache.jit_buffer_size=64M',
        '-d', 'opcache.validate_timestamps=1',
    ];

    /** @param list<string> $argv @return list<string> "-d" flags to restart PHP with; [] when nothing is missing */
    public static function reexecFlags(array $argv): array
    {
        if (\getenv('WEFT_NO_REEXEC') !== false || !\function_exists('pcntl_exec')) {
            return [];
        }
        $flags = [];
        if (!self::opcacheOff($argv) && \extension_loaded('Zend OPcache') && !\ini_get('opcache.enable_cli')) {
            $flags = self::OPCACHE_FLAGS;
        }
        $extension = self::builtExtension();
        if ($extension !== null && !\extension_loaded('weft')) {
            \array_push($flags, '-d', 'extension=' . $extension);
        }
        return $flags;
    }

    /** The native extension built in this checkout by scripts/build-ext.sh, if any. */
    public static function builtExtension(): ?string
    {
        $path = \dirname(__DIR__, 2) . '/ext/modules/weft.so';
        return \is_file($path) ? $path : null;
    }

    /** @return array{opcache: bool, jit: string, extension: bool} */
    public static function describe(): array
    {
        $jit = \function_exists('opcache_get_status') ? (\opcache_get_status(false)['jit']['on'] ?? false) : false;
        return [
            'opcache' => (bool) \ini_get('opcache.enable_cli'),
            'jit' => $jit ? (string) \ini_get('opcache.jit') : 'off',
            'extension' => \extension_loaded('weft'),
        ];
    }

    /** @param list<string> $argv */
    private static function opcacheOff(array $argv): bool
    {
        foreach ($argv as $i => $arg) {
            if ($arg === '--opcache=off' || ($arg === '--opcache' && ($argv[$i + 1] ?? '') === 'off')) {
                return true;
            }
        }
        return false;
    }
}
