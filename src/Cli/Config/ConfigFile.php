<?php

declare(strict_types=1);

namespace Weft\Cli\Config;

use Weft\Cli\UsageError;

/**
 * Reads a configuration file into "--name=value" tokens: a PHP file that returns an array, or an INI
 * file (by its .ini extension). Keys are the command's option names ("max-body"; "max_body" is
 * accepted too, as INI and PHP people write it), plus "app" for the application file. An unknown key
 * is an error naming the file and the key, never ignored: a typo must not silently run with a default.
 */
final class ConfigFile
{
    /** Options typed as a string that hold a comma-separated list ("all", "none" or "stream,sleep"). */
    private const COMMA_SEPARATED = ['hooks'];

    /**
     * @param array<string, array{0: string, 1: mixed, 2: string, 3?: list<string>}> $spec
     * @param list<string> $excluded options a file may not set
     * @return array{array<string, string>, list<string>} tokens by option name, positional arguments
     */
    public static function load(string $file, array $spec, array $excluded): array
    {
        if (!\is_file($file) || !\is_readable($file)) {
            throw new UsageError("configuration file '$file' not found or not readable");
        }
        $values = \str_ends_with(\strtolower($file), '.ini') ? self::ini($file) : self::php($file);
        $tokens = [];
        $arguments = [];
        foreach ($values as $key => $value) {
            $name = \str_replace('_', '-', (string) $key);
            if ($name === 'app') {
                if (!\is_string($value) || $value === '') {
                    throw new UsageError("configuration file $file: 'app' must be the path of the application file");
                }
                // Relative to the file, so a file in /etc/weft can name the app beside it or absolutely.
                $arguments = [self::relativeTo($file, $value)];
                continue;
            }
            if (!isset($spec[$name]) || \in_array($name, $excluded, true)) {
                $known = \implode(', ', \array_diff(\array_keys($spec), $excluded));
                throw new UsageError("configuration file $file: unknown option '$key' (known: app, $known)");
            }
            if ($value === null) {
                continue;
            }
            $type = \in_array($name, self::COMMA_SEPARATED, true) ? 'list' : $spec[$name][0];
            $tokens[$name] = '--' . $name . '=' . self::scalar($file, (string) $key, $value, $type);
        }
        return [$tokens, $arguments];
    }

    /** @return array<mixed> */
    private static function php(string $file): array
    {
        $values = (static function (string $__file): mixed {
            return require $__file;
        })($file);
        if (!\is_array($values)) {
            throw new UsageError("configuration file $file must return an array of options, it returned " . \get_debug_type($values));
        }
        return $values;
    }

    /** @return array<string, string> */
    private static function ini(string $file): array
    {
        $values = @\parse_ini_file($file, false, \INI_SCANNER_RAW);
        if ($values === false) {
            $why = \error_get_last()['message'] ?? 'syntax error';
            throw new UsageError("configuration file $file cannot be parsed: $why");
        }
        foreach ($values as $key => $value) {
            if (\is_array($value)) {
                throw new UsageError("configuration file $file: '$key' must be a single value");
            }
        }
        return $values;
    }

    private static function scalar(string $file, string $key, mixed $value, string $type): string
    {
        if (\is_bool($value)) {
            return $value ? 'on' : 'off';
        }
        if (\is_int($value) || \is_float($value) || \is_string($value)) {
            return (string) $value;
        }
        if (\is_array($value) && $type === 'list' && \array_is_list($value)) {
            return \implode(',', \array_map('strval', $value));
        }
        throw new UsageError("configuration file $file: option '$key' must be a " . ($type === 'list' ? 'list' : 'scalar') . ', got ' . \get_debug_type($value));
    }

    private static function relativeTo(string $file, string $path): string
    {
        if (\str_starts_with($path, '/')) {
            return $path;
        }
        return \dirname((string) \realpath($file)) . '/' . $path;
    }
}
