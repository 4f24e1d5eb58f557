<?php

declare(strict_types=1);

namespace Weft\Cli;

use Weft\Cli\Config\Configuration;

/**
 * `bin/weft config [APP] [serve's options]`: prints the configuration `serve` would run with, each value
 * with where it came from (default, configuration file, WEFT_* variable, command line).
 */
final class ConfigCommand
{
    /** @param list<string> $args */
    public function run(array $args): int
    {
        $json = false;
        $rest = [];
        foreach ($args as $arg) {
            if ($arg === '--json') {
                $json = true;
            } elseif ($arg === '--help') {
                echo "Usage: bin/weft config [APP.php] [serve's options] [--json]\n\n"
                    . "Prints the effective configuration of `bin/weft serve` with the same arguments, and the source of\n"
                    . "each value: default < configuration file (--config, or WEFT_CONFIG) < WEFT_* environment < command line.\n";
                return 0;
            } else {
                $rest[] = $arg;
            }
        }
        $spec = ServeCommand::spec();
        $configuration = Configuration::resolve($rest, $spec);
        $rows = [];
        foreach ($spec as $name => $entry) {
            if ($name === 'help') {
                continue;
            }
            $rows[$name] = [
                'value' => $configuration->options->get($name),
                'source' => $configuration->source($name),
                'env' => Configuration::envName($name),
            ];
        }
        $app = $configuration->options->arguments[0] ?? null;
        if ($json) {
            echo \json_encode(['app' => $app, 'options' => $rows], \JSON_PRETTY_PRINT | \JSON_UNESCAPED_SLASHES | \JSON_THROW_ON_ERROR) . "\n";
            return 0;
        }
        echo 'app: ' . ($app ?? '(none given)') . "\n";
        \printf("%-18s %-28s %s\n", 'option', 'value', 'source');
        foreach ($rows as $name => $row) {
            \printf("%-18s %-28s %s\n", $name, self::show($name, $row['value']), $row['source']);
        }
        return 0;
    }

    /**
     * An unset option (null) is "(default)", whose meaning the option's help gives (a path under RUNDIR,
     * stderr, off): never "-", which is a value of its own (--access-log - is stdout).
     */
    private static function show(string $name, mixed $value): string
    {
        return match (true) {
            $value === null => '(default)',
            $value === '-' && $name === 'access-log' => '- (stdout)',
            $value === true => 'on',
            $value === false => 'off',
            \is_array($value) => \implode(',', $value),
            default => (string) $value,
        };
    }
}
