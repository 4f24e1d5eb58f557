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
        '-d', 'opcache.jit_max_root_traces=' . self::JIT_ROOT_TRACES,
        '-d', 'opcache.jit_max_side_traces=' . self::JIT_SIDE_TRACES,
        '-d', 'opcache.jit_max_exit_counters=' . self::JIT_EXIT_COUNTERS,
        '-d', 'opcache.validate_timestamps=1',
    ];

    /**
     * The tracing JIT's budget of root traces (PHP's default: 1,024). A worker with a pool of framework
     * instances boots each of them in the same process, which makes the boot code hot once per
     * instance: with 16 Laravel instances the boot's traces used up PHP's default budget before the
     * request path got any, and every request after that ran in the interpreter (Laravel `/sql3`:
     * +16 % of sync mode's instructions a request under the JIT, against +7 % without it).
     */
    public const JIT_ROOT_TRACES = 16384;

    /**
     * The side traces each root trace may grow (PHP's default: 128) and the exit counters of all traces
     * (PHP's default: 8,192), raised with the root traces for the same reason: a trace's side exits each
     * take a counter, and once they are gone no exit gets a side trace and none is blacklisted either,
     * so the JIT keeps recording traces it then throws away and the code they cover runs in the
     * interpreter. A worker with a pool of four Laravel instances used them up and then aborted about
     * two recordings a request; raised, Laravel `/sql3` costs 2.9 % fewer instructions a request with
     * four instances and 1.6 % fewer in sync mode (callgrind, scripts/laravel-sql3-ir.php). A counter is
     * a byte of shared memory; the side traces come out of the JIT's buffer, as all traces do.
     */
    public const JIT_SIDE_TRACES = 1024;
    public const JIT_EXIT_COUNTERS = 32768;

    /** The JIT budgets above, setting => the least a resident worker should get. */
    public const JIT_BUDGETS = [
        'opcache.jit_max_root_traces' => self::JIT_ROOT_TRACES,
        'opcache.jit_max_side_traces' => self::JIT_SIDE_TRACES,
        'opcache.jit_max_exit_counters' => self::JIT_EXIT_COUNTERS,
    ];

    /**
     * The "-d" flags to restart PHP with, or [] when nothing is missing. A restart re-creates the whole
     * runtime (flags given on the original command line are not inherited), so the flags describe all
     * of it: opcache and the JIT as they are or should be, and the native extension when built or loaded.
     *
     * @param list<string> $argv @return list<string>
     */
    public static function reexecFlags(array $argv): array
    {
        if (\getenv('WEFT_NO_REEXEC') !== false || !\function_exists('pcntl_exec')) {
            return [];
        }
        $opcacheOn = (bool) \ini_get('opcache.enable_cli');
        $wantOpcache = !self::opcacheOff($argv) && \extension_loaded('Zend OPcache');
        $extension = self::builtExtension();
        $needed = ($wantOpcache && !$opcacheOn)
            || ($extension !== null && !\extension_loaded('weft'))
            || self::inheritedDescriptors() !== [];
        if (!$needed) {
            return [];
        }
        $flags = [];
        if ($opcacheOn) {
            // Keep the settings this PHP was started with (the JIT's budgets no lower than ours).
            foreach (['opcache.enable_cli', 'opcache.jit', 'opcache.jit_buffer_size', 'opcache.validate_timestamps'] as $name) {
                \array_push($flags, '-d', $name . '=' . \ini_get($name));
            }
            foreach (self::JIT_BUDGETS as $name => $least) {
                \array_push($flags, '-d', $name . '=' . \max($least, (int) \ini_get($name)));
            }
        } elseif ($wantOpcache) {
            $flags = self::OPCACHE_FLAGS;
        }
        if ($extension !== null && !self::extensionInIni()) {
            \array_push($flags, '-d', 'extension=' . $extension);
        }
        return $flags === [] ? ['-d', 'opcache.enable_cli=0'] : $flags;
    }

    /**
     * Descriptors this process inherited beyond stdin, stdout and stderr. PHP opens its streams without
     * close-on-exec, so a server started by another PHP process (a test runner, a supervisor written in
     * PHP) can inherit hundreds: its own sockets then get numbers above 1024, which select cannot watch.
     * PHP's own are not counted: the running script and, with opcache on, its lock file (both open for
     * the whole run), and the directory handle of the listing itself. Counting them made every start
     * with opcache already on restart once for nothing.
     *
     * @return list<int>
     */
    public static function inheritedDescriptors(): array
    {
        $entries = @\scandir('/proc/self/fd');
        if ($entries === false) {
            return [];
        }
        $script = \realpath((string) ($_SERVER['SCRIPT_FILENAME'] ?? ''));
        $fds = [];
        foreach ($entries as $entry) {
            if (!\ctype_digit($entry) || (int) $entry <= 2) {
                continue;
            }
            $target = @\readlink('/proc/self/fd/' . $entry);
            if ($target === false || $target === $script || \str_contains($target, '/.ZendSem.')) {
                continue; // the listing's own handle (closed by now), or PHP's own
            }
            $fds[] = (int) $entry;
        }
        return $fds;
    }

    /**
     * Bash that closes every descriptor above stderr, to run before `exec "$@"`. No redirection around the
     * loop: bash would park stderr on a high descriptor, which the loop would then close.
     */
    public const SHED_DESCRIPTORS = 'fds=$(ls /proc/$$/fd); for fd in $fds; do if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi; done; ';

    /**
     * The command that restarts PHP with $flags, closing inherited descriptors first (through bash, which
     * can close any descriptor number, unlike PHP).
     *
     * @param list<string> $flags @param list<string> $argv @return array{string, list<string>}
     */
    public static function reexecCommand(array $flags, array $argv): array
    {
        $php = \array_merge([\PHP_BINARY], $flags, $argv);
        if (!\is_executable('/bin/bash') || self::inheritedDescriptors() === []) {
            return [\PHP_BINARY, \array_merge($flags, $argv)];
        }
        return ['/bin/bash', \array_merge(['-c', self::SHED_DESCRIPTORS . 'exec "$@"', 'weft'], $php)];
    }

    /**
     * The native extension built in this copy of Weft (by scripts/build-ext.sh, or `weft ext:install` in
     * an application's vendor/), if any.
     */
    public static function builtExtension(): ?string
    {
        $path = self::root() . '/ext/modules/weft.so';
        return \is_file($path) ? $path : null;
    }

    /** The directory of this copy of Weft: a checkout, or vendor/weft/weft in an application. */
    public static function root(): string
    {
        return \dirname(__DIR__, 2);
    }

    /**
     * The vendor directory when this Weft is a Composer dependency of an application, null in Weft's own
     * checkout. Composer puts autoload.php two levels above every package (vendor/weft/weft), whatever
     * the vendor directory is called; a path repository's symlink resolves to the checkout, which is
     * then the copy to build in.
     */
    public static function vendorDir(): ?string
    {
        $vendor = \dirname(self::root(), 2);
        return \is_file($vendor . '/autoload.php') && \is_dir($vendor . '/composer') ? $vendor : null;
    }

    /** The command that builds the extension for this copy of Weft, as the user should type it. */
    public static function buildCommand(): string
    {
        return self::vendorDir() === null ? 'bash scripts/build-ext.sh' : self::command() . ' ext:install';
    }

    /**
     * How to get the extension into this PHP, as the user should do it: the epoll loop is optional and PHP
     * does not load the extension by itself.
     */
    public static function extensionHint(): string
    {
        $so = self::root() . '/ext/modules/weft.so';
        return (\is_file($so) ? "It is built ($so); " : 'Build it with `' . self::buildCommand() . '` (needs php8.2-dev and a C compiler), then ')
            . "run PHP with it: `php -d extension=$so " . self::command() . ' ...`.';
    }

    /** How the user runs Weft: vendor/bin/weft in an application, bin/weft in Weft's checkout. */
    public static function command(): string
    {
        $vendor = self::vendorDir();
        return $vendor === null ? 'bin/weft' : \basename($vendor) . '/bin/weft';
    }

    /**
     * Whether PHP's ini files load the extension (`weft ext:install --enable` writes one): the restarted
     * PHP reads them again, and a second `-d extension=` would warn that the module is already loaded.
     */
    public static function extensionInIni(): bool
    {
        $files = \array_filter(\array_map('trim', \explode(',', (string) \php_ini_scanned_files())));
        if (($main = \php_ini_loaded_file()) !== false) {
            $files[] = $main;
        }
        foreach ($files as $file) {
            $text = @\file_get_contents($file);
            if (\is_string($text) && \preg_match('/^\s*extension\s*=\s*["\']?(?:\S*\/)?weft(?:\.so)?["\']?\s*$/m', $text)) {
                return true;
            }
        }
        return false;
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
        // --opcache may also come from WEFT_OPCACHE or a --config file: ask the configuration layers.
        try {
            return Config\Configuration::resolve(\array_slice($argv, 2), ServeCommand::spec())->options->get('opcache') === 'off';
        } catch (\Throwable) {
            // A bad option is reported by serve itself, after the restart; fall back to the plain scan.
        }
        foreach ($argv as $i => $arg) {
            if ($arg === '--opcache=off' || ($arg === '--opcache' && ($argv[$i + 1] ?? '') === 'off')) {
                return true;
            }
        }
        return false;
    }
}
