<?php

declare(strict_types=1);

namespace Weft\Cli;

/**
 * Parses "--name value", "--name=value" and flags against a declared spec. Anything undeclared or of
 * the wrong type is a UsageError naming the option, never silently ignored.
 *
 * Spec entry: name => [type, default, help, allowed values?]; types: int, float, string, bool, bytes, list.
 */
final class Options
{
    /** @param array<string, mixed> $values @param list<string> $arguments */
    private function __construct(private readonly array $values, public readonly array $arguments)
    {
    }

    /** @param list<string> $argv @param array<string, array{0: string, 1: mixed, 2: string, 3?: list<string>}> $spec */
    public static function parse(array $argv, array $spec): self
    {
        $values = [];
        foreach ($spec as $name => $entry) {
            $values[$name] = $entry[1];
        }
        $arguments = [];
        for ($i = 0; $i < \count($argv); $i++) {
            $arg = $argv[$i];
            if ($arg === '--') {
                \array_push($arguments, ...\array_slice($argv, $i + 1));
                break;
            }
            if (!\str_starts_with($arg, '--')) {
                if (\str_starts_with($arg, '-') && $arg !== '-') {
                    throw new UsageError("unknown option '$arg'");
                }
                $arguments[] = $arg;
                continue;
            }
            $name = \substr($arg, 2);
            $value = null;
            if (\str_contains($name, '=')) {
                [$name, $value] = \explode('=', $name, 2);
            }
            if (!isset($spec[$name])) {
                throw new UsageError("unknown option '--$name'");
            }
            [$type] = $spec[$name];
            if ($type === 'bool') {
                $values[$name] = $value === null ? true : self::bool($name, $value);
                continue;
            }
            if ($value === null) {
                if (!isset($argv[$i + 1]) || \str_starts_with($argv[$i + 1], '--')) {
                    throw new UsageError("option '--$name' needs a value");
                }
                $value = $argv[++$i];
            }
            $values[$name] = self::convert($name, $type, $value, $spec[$name][3] ?? null);
        }
        return new self($values, $arguments);
    }

    public function get(string $name): mixed
    {
        if (!\array_key_exists($name, $this->values)) {
            throw new \LogicException("Option '$name' is not declared");
        }
        return $this->values[$name];
    }

    /** @param array<string, array{0: string, 1: mixed, 2: string, 3?: list<string>}> $spec */
    public static function help(array $spec): string
    {
        $lines = [];
        foreach ($spec as $name => $entry) {
            [$type, $default, $help] = $entry;
            $flag = '--' . $name . ($type === 'bool' ? '' : ' ' . \strtoupper($type === 'list' ? 'a,b' : ($type === 'bytes' ? 'size' : ($type === 'string' && isset($entry[3]) ? \implode('|', $entry[3]) : $type))));
            $defaultText = match (true) {
                $default === null, $default === false, $default === '', $default === [] => '',
                $type === 'bytes' && \is_int($default) && $default > 0 => ' (default: ' . self::size($default) . ')',
                \is_array($default) => ' (default: ' . \implode(',', $default) . ')',
                $default === true => ' (default: on)',
                default => " (default: $default)",
            };
            $lines[] = \sprintf('  %-34s %s%s', $flag, $help, $defaultText);
        }
        return \implode("\n", $lines);
    }

    private static function size(int $bytes): string
    {
        foreach (['G' => 1024 ** 3, 'M' => 1024 ** 2, 'K' => 1024] as $unit => $factor) {
            if ($bytes % $factor === 0) {
                return \intdiv($bytes, $factor) . $unit;
            }
        }
        return (string) $bytes;
    }

    private static function convert(string $name, string $type, string $value, ?array $allowed): mixed
    {
        switch ($type) {
            case 'int':
                if (!\preg_match('/^-?\d+$/', $value)) {
                    throw new UsageError("option '--$name' expects a whole number, got '$value'");
                }
                return (int) $value;
            case 'float':
                if (!\is_numeric($value)) {
                    throw new UsageError("option '--$name' expects a number, got '$value'");
                }
                return (float) $value;
            case 'bytes':
                if (!\preg_match('/^(\d+)\s*([kKmMgG]?)[bB]?$/', $value, $m)) {
                    throw new UsageError("option '--$name' expects a size like 8M or 8192, got '$value'");
                }
                return (int) $m[1] * match (\strtolower($m[2])) { 'k' => 1024, 'm' => 1024 ** 2, 'g' => 1024 ** 3, default => 1 };
            case 'list':
                return \array_values(\array_filter(\array_map('trim', \explode(',', $value)), static fn ($v) => $v !== ''));
            default:
                if ($allowed !== null && !\in_array($value, $allowed, true)) {
                    // --help spells the choices in capitals (--log-level DEBUG|INFO|...), as every
                    // placeholder, and WEFT_LOG_LEVEL=WARNING is how environments are often written.
                    foreach ($allowed as $choice) {
                        if (\strcasecmp($choice, $value) === 0) {
                            return $choice;
                        }
                    }
                    throw new UsageError("option '--$name' expects one of " . \implode(', ', $allowed) . ", got '$value'");
                }
                return $value;
        }
    }

    private static function bool(string $name, string $value): bool
    {
        return match (\strtolower($value)) {
            '1', 'on', 'yes', 'true' => true,
            '0', 'off', 'no', 'false' => false,
            default => throw new UsageError("option '--$name' expects on or off, got '$value'"),
        };
    }
}
