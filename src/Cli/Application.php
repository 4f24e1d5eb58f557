<?php

declare(strict_types=1);

namespace Weft\Cli;

/** `bin/weft`: thin. Parses the command line, calls the layers, prints, returns an exit code. */
final class Application
{
    public const VERSION = \Weft\Version::VERSION;

    private const COMMANDS = [
        'serve' => 'Run an application: HTTP or line protocol, in coroutine, sync or fpm mode',
        'stop' => 'Stop a running server gracefully (SIGTERM to its master)',
        'reload' => 'Reload a running server: new workers load the app afresh, old ones drain (SIGHUP)',
        'config' => 'Print the effective serve configuration and where each value comes from (file, WEFT_* env, command line)',
        'status' => "Show a running server's workers: pid, uptime, requests, connections, coroutines, memory",
        'bench' => 'Run the benchmark scenarios (bench --help), or measure your own app and get a mode, workers and concurrency (bench app APP.php)',
        'preload' => 'Write an opcache.preload script for an application (for fpm mode)',
        'fuzz' => 'Fuzz the HTTP request parser (and a live server with --live); deterministic by --seed',
        'ext:install' => 'Build the native extension (epoll loop, hooks) from this copy of Weft, vendor/ included; --enable writes its ini file',
    ];

    /** @param list<string> $argv */
    public function run(array $argv): int
    {
        $command = $argv[1] ?? 'help';
        $args = \array_slice($argv, 2);
        try {
            return match ($command) {
                'serve' => (new ServeCommand())->run($args),
                'stop', 'reload', 'status' => (new ControlCommand($command))->run($args),
                'config' => (new ConfigCommand())->run($args),
                'bench' => (new BenchCommand())->run($args),
                'preload' => (new PreloadCommand())->run($args),
                'fuzz' => (new FuzzCommand())->run($args),
                'ext:install' => (new ExtInstallCommand())->run($args),
                'help', '--help', '-h' => $this->help(),
                '--version', '-V' => $this->version(),
                default => throw new UsageError("unknown command '$command' (try: bin/weft help)"),
            };
        } catch (UsageError $e) {
            \fwrite(\STDERR, 'weft: ' . $e->getMessage() . "\n");
            return 2;
        }
    }

    private function help(): int
    {
        echo "Weft " . self::VERSION . " — a high-performance application server for PHP\n\n";
        echo "Usage: bin/weft COMMAND [options]   (bin/weft COMMAND --help for its options)\n\n";
        foreach (self::COMMANDS as $name => $text) {
            \printf("  %-11s %s\n", $name, $text);
        }
        return 0;
    }

    private function version(): int
    {
        echo 'Weft ' . self::VERSION . ' (PHP ' . \PHP_VERSION . ")\n";
        return 0;
    }
}
