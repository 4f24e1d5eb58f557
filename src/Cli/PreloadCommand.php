<?php

declare(strict_types=1);

namespace Weft\Cli;

use Weft\Mode\Fpm\Autoload;
use Weft\Mode\Fpm\PreloadScript;

/**
 * `bin/weft preload APP.php`: writes an opcache.preload script for fpm mode. The classes are found
 * by running the application once in a fresh PHP process, as the front controller would, not by
 * globbing folders: what gets preloaded is what the app actually loads while serving.
 */
final class PreloadCommand
{
    private const PROBE = __DIR__ . '/../Mode/Fpm/preload-probe.php';

    /** @return array<string, array{0: string, 1: mixed, 2: string, 3?: list<string>}> */
    public static function spec(): array
    {
        return [
            'out' => ['string', null, 'where to write the script (default: APP-preload.php beside the app)'],
            'path' => ['list', ['/'], 'paths to GET from the app while watching which classes it loads'],
            'check' => ['bool', true, 'load the written script once with opcache.preload and report what it preloaded (--check=off: skip)'],
            'help' => ['bool', false, 'show this help'],
        ];
    }

    /** @param list<string> $args */
    public function run(array $args): int
    {
        $options = Options::parse($args, self::spec());
        if ($options->get('help')) {
            echo "Usage: bin/weft preload APP.php [options]\n\n"
                . "Writes an opcache.preload script listing the classes APP.php loads while serving;\n"
                . "use it with: bin/weft serve APP.php --mode fpm --preload FILE\n\n"
                . Options::help(self::spec()) . "\n";
            return 0;
        }
        $app = $options->arguments[0] ?? throw new UsageError('preload needs an application file: bin/weft preload APP.php');
        if (\count($options->arguments) > 1) {
            throw new UsageError("unexpected argument '{$options->arguments[1]}'");
        }
        if (!\is_file($app)) {
            throw new UsageError("application file '$app' not found");
        }
        $app = (string) \realpath($app);
        $paths = $options->get('path');
        foreach ($paths as $path) {
            if (!\str_starts_with($path, '/')) {
                throw new UsageError("option '--path' expects paths starting with '/', got '$path'");
            }
        }
        $out = $options->get('out') ?? \dirname($app) . '/' . \basename($app, '.php') . '-preload.php';
        $outDir = \realpath(\dirname($out));
        if ($outDir === false || !\is_dir($outDir)) {
            throw new UsageError("the folder of '$out' does not exist");
        }
        $out = $outDir . '/' . \basename($out);

        $classes = $this->probe($app, $paths);
        if ($classes === null) {
            return 1;
        }
        $probe = (string) \realpath(self::PROBE);
        $plan = PreloadScript::plan($classes, [$probe]);
        $user = \posix_getpwuid(\posix_geteuid());
        $script = $plan->render($app, $out, \is_array($user) ? $user['name'] : 'www-data', $paths);
        if (@\file_put_contents($out, $script) === false) {
            \fwrite(\STDERR, "weft: cannot write '$out': " . (\error_get_last()['message'] ?? 'unknown error') . "\n");
            return 1;
        }
        foreach ($plan->skipped as $name => $why) {
            \fwrite(\STDERR, 'weft: not preloaded: ' . \addcslashes("$name: $why", "\0..\37") . "\n");
        }
        echo "Wrote $out: {$plan->classes} classes, interfaces and traits in " . \count($plan->files) . " files\n";
        if ($options->get('check')) {
            $this->check($out, \is_array($user) ? $user['name'] : '');
        }
        echo "Use it with: bin/weft serve $app --mode fpm --preload $out\n";
        return 0;
    }

    /**
     * @param list<string> $paths
     * @return list<array{name: string, file: string, parent: ?string, interfaces: list<string>, traits: list<string>, anonymous: bool}>|null
     */
    private function probe(string $app, array $paths): ?array
    {
        $command = [\PHP_BINARY, '-d', 'opcache.enable_cli=0', self::PROBE, Autoload::file(), $app, \json_encode($paths, \JSON_THROW_ON_ERROR)];
        [$code, $stdout, $stderr] = self::execute($command);
        if ($stderr !== '') {
            \fwrite(\STDERR, $stderr);
        }
        $report = \json_decode($stdout, true);
        if ($code !== 0 || !\is_array($report) || !isset($report['classes'])) {
            \fwrite(\STDERR, "weft: cannot run $app to find the classes it loads (probe exited with code $code)\n");
            return null;
        }
        return $report['classes'];
    }

    /** Loads the script as php-fpm would, once, in the CLI: compile errors and unlinkable classes show here. */
    private function check(string $out, string $user): void
    {
        $code = 'echo json_encode(opcache_get_status(false)["preload_statistics"] ?? null);';
        [$exit, $stdout, $stderr] = self::execute([
            \PHP_BINARY, '-d', 'opcache.enable=1', '-d', 'opcache.enable_cli=1', '-d', 'opcache.preload=' . $out,
            '-d', 'opcache.preload_user=' . $user,
            '-d', 'display_errors=stderr', '-d', 'log_errors=0', '-r', $code,
        ]);
        foreach (\array_filter(\explode("\n", \trim($stderr))) as $line) {
            \fwrite(\STDERR, "weft: preload check: $line\n");
        }
        $stats = \json_decode($stdout, true);
        if ($exit !== 0 || !\is_array($stats)) {
            \fwrite(\STDERR, "weft: preload check: php could not load the script (exit code $exit)\n");
            return;
        }
        echo 'Check: opcache preloaded ' . \count($stats['classes'] ?? []) . ' classes from ' . \count($stats['scripts'] ?? []) . " scripts\n";
    }

    /**
     * @param list<string> $command
     * @return array{0: int, 1: string, 2: string} exit code, stdout, stderr
     */
    private static function execute(array $command): array
    {
        $stderr = \tmpfile();
        $process = \proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => $stderr], $pipes);
        if ($process === false) {
            return [127, '', 'cannot start ' . $command[0] . "\n"];
        }
        $stdout = (string) \stream_get_contents($pipes[1]);
        \fclose($pipes[1]);
        $code = \proc_close($process);
        \rewind($stderr);
        $errors = (string) \stream_get_contents($stderr);
        \fclose($stderr);
        return [$code, $stdout, $errors];
    }
}
