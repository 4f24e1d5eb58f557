<?php

declare(strict_types=1);

namespace Weft\Cli\Config;

use Weft\Cli\Options;
use Weft\Cli\UsageError;

/**
 * The effective options of a command, from four layers: defaults < configuration file < WEFT_*
 * environment variables < command line. It is generic over the command's option spec: every option a
 * command declares can be set in each layer, so options added later are covered without code here.
 *
 * Each layer is turned into "--name=value" tokens and checked on its own with the command's own parser,
 * so a bad value is reported with the layer that gave it ("environment variable WEFT_WORKERS: option
 * '--workers' expects a whole number, got 'four'"). The layers are then parsed in order as one argument
 * list, in which a later occurrence of an option overrides an earlier one: that is the precedence.
 */
final class Configuration
{
    /** Options that only make sense typed on a command line. */
    private const NOT_LAYERED = ['help', 'config'];
    public const ENV_PREFIX = 'WEFT_';

    /**
     * @param array<string, string> $sources option name => where its value came from
     */
    private function __construct(
        public readonly Options $options,
        public readonly array $sources,
        public readonly ?string $file,
    ) {
    }

    /**
     * @param list<string> $argv the command line after the command's name
     * @param array<string, array{0: string, 1: mixed, 2: string, 3?: list<string>}> $spec
     * @param null|array<string, string> $env the environment (default: getenv())
     */
    public static function resolve(array $argv, array $spec, ?array $env = null): self
    {
        $env ??= \getenv();
        $cli = Options::parse($argv, $spec);
        $file = isset($spec['config']) ? ($cli->get('config') ?? self::nonEmpty($env[self::ENV_PREFIX . 'CONFIG'] ?? null)) : null;

        $sources = [];
        foreach ($spec as $name => $_) {
            $sources[$name] = 'default';
        }
        $tokens = [];
        $arguments = [];
        if ($file !== null) {
            [$fileTokens, $fileArguments] = ConfigFile::load($file, $spec, self::NOT_LAYERED);
            self::check($fileTokens, $spec, "configuration file $file");
            foreach ($fileTokens as $name => $token) {
                $sources[$name] = "file $file";
            }
            $tokens = \array_merge($tokens, \array_values($fileTokens));
            $arguments = $fileArguments;
        }
        $envTokens = [];
        foreach ($spec as $name => $entry) {
            if (\in_array($name, self::NOT_LAYERED, true)) {
                continue;
            }
            $variable = self::envName($name);
            $value = $env[$variable] ?? null;
            if ($value === null || $value === '') {
                continue;
            }
            $envTokens[$name] = "--$name=$value";
            self::check([$envTokens[$name]], $spec, "environment variable $variable");
            $sources[$name] = "env $variable";
        }
        $tokens = \array_merge($tokens, \array_values($envTokens));
        foreach (self::givenOnCommandLine($argv, $spec) as $name) {
            $sources[$name] = 'command line';
        }
        if ($file !== null) {
            $sources['config'] = $cli->get('config') !== null ? 'command line' : 'env ' . self::ENV_PREFIX . 'CONFIG';
        }
        // The command line's own arguments (the application file) win over the file's "app".
        $positional = $cli->arguments !== [] ? [] : $arguments;
        $merged = Options::parse(\array_merge($tokens, $argv, $positional === [] ? [] : ['--'], $positional), $spec);
        return new self($merged, $sources, $file);
    }

    /**
     * The pid file of the server that `serve` with these control-command arguments (--pid-file, --port,
     * --config) and the same environment would run: what stop, reload and status talk to.
     *
     * @param list<string> $argv
     */
    public static function pidFileOf(array $argv, ?array $env = null): string
    {
        $kept = [];
        for ($i = 0; $i < \count($argv); $i++) {
            $name = \str_starts_with($argv[$i], '--') ? \explode('=', \substr($argv[$i], 2), 2)[0] : null;
            if (\in_array($name, ['pid-file', 'port', 'config'], true)) {
                $kept[] = $argv[$i];
                if (!\str_contains($argv[$i], '=') && isset($argv[$i + 1])) {
                    $kept[] = $argv[++$i];
                }
            }
        }
        $options = self::resolve($kept, \Weft\Cli\ServeCommand::spec(), $env)->options;
        return $options->get('pid-file') ?? \Weft\Server\RuntimeFiles::defaultPidFile($options->get('port'));
    }

    public static function envName(string $option): string
    {
        return self::ENV_PREFIX . \strtoupper(\str_replace('-', '_', $option));
    }

    public function source(string $option): string
    {
        return $this->sources[$option] ?? 'default';
    }

    /**
     * A check made after merging (a range, a combination) names the option; this adds where its value
     * came from when that was not the command line, so the user knows which file or variable to fix.
     */
    public function explain(UsageError $error): UsageError
    {
        if (!\preg_match("/option '--([a-z0-9-]+)'/", $error->getMessage(), $m)) {
            return $error;
        }
        $source = $this->source($m[1]);
        if ($source === 'command line' || $source === 'default') {
            return $error;
        }
        return new UsageError($error->getMessage() . ' (set by ' . self::describe($source) . ')', 0, $error);
    }

    public static function describe(string $source): string
    {
        return match (true) {
            \str_starts_with($source, 'env ') => 'environment variable ' . \substr($source, 4),
            \str_starts_with($source, 'file ') => 'configuration file ' . \substr($source, 5),
            default => $source,
        };
    }

    /** @param list<string> $tokens */
    private static function check(array $tokens, array $spec, string $where): void
    {
        try {
            Options::parse(\array_values($tokens), $spec);
        } catch (UsageError $e) {
            throw new UsageError("$where: " . $e->getMessage(), 0, $e);
        }
    }

    /** @return list<string> names of the options present on the command line */
    private static function givenOnCommandLine(array $argv, array $spec): array
    {
        $given = [];
        foreach ($argv as $arg) {
            if ($arg === '--') {
                break;
            }
            if (\str_starts_with($arg, '--')) {
                $name = \explode('=', \substr($arg, 2), 2)[0];
                if (isset($spec[$name])) {
                    $given[] = $name;
                }
            }
        }
        return $given;
    }

    private static function nonEmpty(?string $value): ?string
    {
        return $value === null || $value === '' ? null : $value;
    }
}
