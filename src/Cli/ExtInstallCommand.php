<?php

declare(strict_types=1);

namespace Weft\Cli;

/**
 * `weft ext:install`: builds Weft's native extension from the copy of Weft it runs from (an application's
 * vendor/weft/weft, or a checkout) with phpize, and tells how it is loaded. `weft serve` loads the built
 * module by itself; `--enable` also writes an ini file, so that every other PHP command (a test runner,
 * a queue worker) loads it too.
 */
final class ExtInstallCommand
{
    /** The ini file name: after Debian's own extensions (10-, 20-), which the hooks wrap. */
    public const INI_FILE = '30-weft.ini';

    /** @return array<string, array{0: string, 1: mixed, 2: string, 3?: list<string>}> */
    public static function spec(): array
    {
        return [
            'enable' => ['bool', false, "also write " . self::INI_FILE . " into PHP's scan directory (php --ini: \"Scan for additional .ini files in\"), so every PHP command loads the extension"],
            'ini-dir' => ['string', null, 'write ' . self::INI_FILE . ' into this directory instead (implies --enable); PHP reads it with PHP_INI_SCAN_DIR=":DIR"'],
            'help' => ['bool', false, 'show this help'],
        ];
    }

    /** @param list<string> $args */
    public function run(array $args): int
    {
        $options = Options::parse($args, self::spec());
        $self = PhpRuntime::command();
        if ($options->get('help')) {
            echo "Usage: $self ext:install [--enable | --ini-dir DIR]\n\n"
                . "Builds Weft's native extension (epoll loop, hooks of blocking calls) from this copy of Weft\n"
                . "(" . PhpRuntime::root() . "/ext) with phpize, configure and make: it needs the PHP headers and\n"
                . "a C compiler (Debian: apt-get install php" . \PHP_MAJOR_VERSION . '.' . \PHP_MINOR_VERSION . "-dev build-essential).\n"
                . "`weft serve` loads the built module by itself.\n\n"
                . Options::help(self::spec()) . "\n";
            return 0;
        }
        if ($options->arguments !== []) {
            throw new UsageError("unexpected argument '{$options->arguments[0]}'");
        }
        $iniDir = $options->get('ini-dir');
        $enable = $iniDir !== null || $options->get('enable');

        $so = $this->build();
        if ($so === null) {
            return 1;
        }
        echo "Built the weft extension: $so\n";
        echo "`$self serve` loads it by itself (it restarts PHP with -d extension=$so).\n";
        if (!$enable) {
            echo "Other PHP commands load it with: php -d extension=$so ...\n"
                . "or from an ini file: $self ext:install --enable (writes " . self::INI_FILE . " into PHP's scan directory)\n";
            echo "A reinstall of weft/weft (composer install or update) removes the module: run this command again after one.\n";
            return 0;
        }
        return $this->enable($so, $iniDir);
    }

    /** The built module's path, or null when the build failed (the script has said why on stderr). */
    private function build(): ?string
    {
        $script = PhpRuntime::root() . '/scripts/build-ext.sh';
        if (!\is_file($script) || !\is_dir(PhpRuntime::root() . '/ext')) {
            \fwrite(\STDERR, "weft: this copy of Weft has no extension sources (" . PhpRuntime::root() . "/ext and scripts/build-ext.sh)\n");
            return null;
        }
        echo "Building the weft extension in " . PhpRuntime::root() . "/ext (phpize, configure, make: a minute at most)...\n";
        // The headers must be those of the PHP that runs Weft: build-ext.sh picks phpize by $PHP's version.
        $env = \getenv() + [];
        $env['PHP'] = \PHP_BINARY;
        $process = \proc_open(['bash', $script], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => \STDERR], $pipes, PhpRuntime::root(), $env);
        if (!\is_resource($process)) {
            \fwrite(\STDERR, "weft: cannot run bash $script\n");
            return null;
        }
        $out = (string) \stream_get_contents($pipes[1]);
        \fclose($pipes[1]);
        if (\proc_close($process) !== 0) {
            \fwrite(\STDERR, "weft: the extension build failed (see above)\n");
            return null;
        }
        $lines = \preg_split('/\R/', \trim($out)) ?: [];
        $so = (string) \end($lines);
        if (!\is_file($so)) {
            \fwrite(\STDERR, "weft: the build printed no module path:\n$out\n");
            return null;
        }
        return $so;
    }

    private function enable(string $so, ?string $iniDir): int
    {
        $dir = $iniDir ?? self::scanDir();
        if ($dir === null) {
            \fwrite(\STDERR, "weft: this PHP scans no directory for ini files (php --ini): pass one with --ini-dir DIR\n");
            return 1;
        }
        if (!\is_dir($dir) && ($iniDir === null || !@\mkdir($dir, 0o755, true))) {
            \fwrite(\STDERR, "weft: '$dir' is not a directory and cannot be created\n");
            return 1;
        }
        $ini = \rtrim($dir, '/') . '/' . self::INI_FILE;
        $text = "; Weft's native extension (epoll loop, hooks of blocking calls), written by weft ext:install.\n"
            . "; It is built inside the application's vendor/weft/weft: run weft ext:install again after a reinstall.\n"
            . "extension=$so\n";
        if (@\file_put_contents($ini, $text) === false) {
            \fwrite(\STDERR, "weft: cannot write '$ini': " . (\error_get_last()['message'] ?? 'unknown error')
                . ($iniDir === null ? " (run as root, or pick a directory of yours with --ini-dir DIR)" : '') . "\n");
            return 1;
        }
        echo "Enabled: wrote $ini\n";

        // Check it as PHP will read it: the scan directory as it is, or the given one added to it.
        $env = \getenv() + [];
        if ($iniDir !== null && !\in_array(\realpath($dir), \array_map('realpath', self::scanDirs()), true)) {
            $env['PHP_INI_SCAN_DIR'] = ':' . $dir;
            echo "PHP reads it when PHP_INI_SCAN_DIR includes the directory; keep PHP's own with a leading colon:\n"
                . "  export PHP_INI_SCAN_DIR=\":$dir\"\n";
        }
        $process = \proc_open([\PHP_BINARY, '-r', 'echo extension_loaded("weft") ? "loaded" : "missing";'], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, $env);
        $out = \is_resource($process) ? (string) \stream_get_contents($pipes[1]) . (string) \stream_get_contents($pipes[2]) : '';
        if (\is_resource($process)) {
            \proc_close($process);
        }
        if (!\str_contains($out, 'loaded') || \str_contains($out, 'missing') || \str_contains($out, 'Warning')) {
            \fwrite(\STDERR, "weft: PHP does not load the extension through $ini cleanly:\n" . \trim($out) . "\n");
            return 1;
        }
        echo "Checked: `php -r 'extension_loaded(\"weft\")'` is true.\n";
        return 0;
    }

    /** The directory to write into by default: the last one PHP scans. */
    private static function scanDir(): ?string
    {
        $dirs = self::scanDirs();
        return $dirs === [] ? null : \end($dirs);
    }

    /**
     * The directories this PHP scans for ini files, as `php --ini` reports them (PHP_INI_SCAN_DIR, or the
     * one compiled in; PHP has no function that tells).
     *
     * @return list<string>
     */
    private static function scanDirs(): array
    {
        $process = \proc_open([\PHP_BINARY, '--ini'], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
        if (!\is_resource($process)) {
            return [];
        }
        $out = (string) \stream_get_contents($pipes[1]);
        \proc_close($process);
        if (!\preg_match('/^Scan for additional \.ini files in:\s*(.*)$/m', $out, $m) || \trim($m[1]) === '(none)') {
            return [];
        }
        $dirs = \array_values(\array_filter(\explode(':', \trim($m[1])), static fn (string $d): bool => $d !== ''));
        return $dirs;
    }
}
