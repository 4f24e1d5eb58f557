<?php

declare(strict_types=1);

namespace Weft\Server\Watch;

/**
 * What `serve --watch` watches: directory trees and the files in them that count, as absolute paths.
 *
 * By default the application file's directory tree, but only the files an application's behaviour comes
 * from: PHP files, `.env` files, `composer.lock` and configuration files (YAML, INI, NEON, XML). A
 * `--watch-path` adds a file, a directory (every file under it) or a glob (`templates/** /*.twig`, where
 * `**` crosses directories and `*` does not).
 *
 * Never under `.git/`, `node_modules/`, `var/`, `storage/` nor `bootstrap/cache/`: applications and tools
 * write there while they run (caches, logs, compiled views), and a watcher that reloads on its own
 * application's writes reloads forever. `vendor/` is skipped too (a --watch-path may name a directory under it):
 * `composer.lock` changes whenever the dependencies do.
 */
final class WatchList
{
    /** Directory names never entered, wherever they are. */
    public const ALWAYS_EXCLUDED = ['.git', 'node_modules', 'var', 'storage'];
    /** Entered only when a --watch-path names them (or a directory under them). */
    public const EXCLUDED_BY_DEFAULT = ['vendor'];
    /** Relative paths (from a watched root) never entered. */
    public const EXCLUDED_PATHS = ['bootstrap/cache'];
    /** Files of the default tree that count, as regular expressions on the base name. */
    private const DEFAULT_FILES = '/(\.php|\.ya?ml|\.ini|\.neon|\.xml|^\.env(\..+)?|^composer\.lock)$/';

    /**
     * @param list<array{0: string, 1: ?string}> $roots absolute directory or file, and the regular
     *        expression a file's path relative to it must match (null: every file)
     */
    private function __construct(public readonly array $roots)
    {
    }

    /**
     * @param list<string> $extra --watch-path entries, relative to $cwd unless absolute
     * @throws \InvalidArgumentException a path that does not exist (a glob may match nothing yet)
     */
    public static function build(string $appFile, array $extra = [], ?string $cwd = null): self
    {
        $cwd ??= (string) \getcwd();
        $roots = [[\dirname($appFile), self::DEFAULT_FILES]];
        foreach ($extra as $entry) {
            $absolute = \str_starts_with($entry, '/') ? $entry : \rtrim($cwd, '/') . '/' . $entry;
            if (\strpbrk($entry, '*?[') !== false) {
                // The part before the first wildcard is the directory walked; the rest, the pattern.
                $wild = (int) \strcspn($absolute, '*?[');
                $base = \rtrim(\substr($absolute, 0, (int) \strrpos(\substr($absolute, 0, $wild), '/')), '/');
                $real = \realpath($base === '' ? '/' : $base);
                if ($real === false || !\is_dir($real)) {
                    throw new \InvalidArgumentException("--watch-path '$entry': directory '$base' not found");
                }
                $pattern = \substr($absolute, \strlen($base) + 1);
                $roots[] = [$real, self::globToRegex($pattern)];
                continue;
            }
            $real = \realpath($absolute);
            if ($real === false) {
                throw new \InvalidArgumentException("--watch-path '$entry' not found");
            }
            $roots[] = [$real, null];
        }
        return new self($roots);
    }

    /** `**` matches across directories (also none), `*` and `?` within one name, `[...]` a class. */
    public static function globToRegex(string $glob): string
    {
        $regex = '';
        $length = \strlen($glob);
        for ($i = 0; $i < $length; $i++) {
            $c = $glob[$i];
            if ($c === '*' && ($glob[$i + 1] ?? '') === '*') {
                $i++;
                if (($glob[$i + 1] ?? '') === '/') {
                    $i++;
                    $regex .= '(?:.*/)?';
                } else {
                    $regex .= '.*';
                }
            } elseif ($c === '*') {
                $regex .= '[^/]*';
            } elseif ($c === '?') {
                $regex .= '[^/]';
            } elseif ($c === '[' && ($end = \strpos($glob, ']', $i + 1)) !== false) {
                $class = \substr($glob, $i + 1, $end - $i - 1);
                $regex .= '[' . (\str_starts_with($class, '!') ? '^' . \substr($class, 1) : $class) . ']';
                $i = $end;
            } else {
                $regex .= \preg_quote($c, '#');
            }
        }
        return '#^' . $regex . '$#';
    }

    /** Whether the walk enters directory $dir (absolute), met under $root. */
    public function enters(string $root, string $dir): bool
    {
        if ($dir === $root) {
            return true;
        }
        $name = \basename($dir);
        if (\in_array($name, self::ALWAYS_EXCLUDED, true)) {
            return false;
        }
        $relative = \substr($dir, \strlen($root) + 1);
        foreach (self::EXCLUDED_PATHS as $path) {
            if ($relative === $path || \str_ends_with($relative, '/' . $path)) {
                return false;
            }
        }
        // A --watch-path under vendor/ is a root of its own, entered from there.
        return !\in_array($name, self::EXCLUDED_BY_DEFAULT, true);
    }

    /** Whether file $file (absolute), met under $root, counts. */
    public function counts(string $root, string $file): bool
    {
        foreach ($this->roots as [$rootPath, $pattern]) {
            if ($rootPath !== $root) {
                continue;
            }
            if ($pattern === null) {
                return true;
            }
            if ($pattern === self::DEFAULT_FILES) {
                if (\preg_match($pattern, \basename($file)) === 1) {
                    return true;
                }
                continue;
            }
            if (\preg_match($pattern, \substr($file, \strlen($rootPath) + 1)) === 1) {
                return true;
            }
        }
        return false;
    }

    /** Whether any root (of any kind) makes $file count: for event sources that see paths, not roots. */
    public function anyCounts(string $file): bool
    {
        foreach ($this->roots as [$root]) {
            if (($file === $root || \str_starts_with($file, $root . '/')) && $this->counts($root, $file) && $this->reachable($root, $file)) {
                return true;
            }
        }
        return false;
    }

    /** Whether every directory between $root and $file would be entered. */
    private function reachable(string $root, string $file): bool
    {
        $dir = \dirname($file);
        while (\strlen($dir) > \strlen($root)) {
            if (!$this->enters($root, $dir)) {
                return false;
            }
            $dir = \dirname($dir);
        }
        return true;
    }

    /** Walks every root: yields [root, absolute file] for each file that counts. @return \Generator<int, array{0: string, 1: string}> */
    public function files(): \Generator
    {
        $seenRoots = [];
        foreach ($this->roots as [$root]) {
            if (isset($seenRoots[$root])) {
                continue;
            }
            $seenRoots[$root] = true;
            if (\is_file($root)) {
                yield [$root, $root];
                continue;
            }
            yield from $this->walk($root, $root);
        }
    }

    /** The directories to watch (inotify): every root directory and every directory entered under it. @return list<string> */
    public function directories(): array
    {
        $dirs = [];
        foreach ($this->roots as [$root]) {
            $dir = \is_dir($root) ? $root : \dirname($root);
            if (!isset($dirs[$dir])) {
                $dirs[$dir] = true;
                if (\is_dir($root)) {
                    foreach ($this->subdirectories($root, $root) as $sub) {
                        $dirs[$sub] = true;
                    }
                }
            }
        }
        return \array_keys($dirs);
    }

    /** The root a path under a watched directory belongs to (the longest), or null. */
    public function rootOf(string $path): ?string
    {
        $best = null;
        foreach ($this->roots as [$root]) {
            if (($path === $root || \str_starts_with($path, $root . '/')) && ($best === null || \strlen($root) > \strlen($best))) {
                $best = $root;
            }
        }
        return $best;
    }

    /** @return list<string> directories entered under $dir (not $dir itself) */
    public function subdirectories(string $root, string $dir): array
    {
        $found = [];
        $names = @\scandir($dir);
        if ($names === false) {
            return [];
        }
        foreach ($names as $name) {
            if ($name === '.' || $name === '..') {
                continue;
            }
            $path = $dir . '/' . $name;
            // Symbolic links are not followed: a link to a parent would loop, and one out of the tree
            // (vendor packages symlinked by a path repository) is usually vendor's business.
            if (!\is_link($path) && \is_dir($path) && $this->enters($root, $path)) {
                $found[] = $path;
                \array_push($found, ...$this->subdirectories($root, $path));
            }
        }
        return $found;
    }

    /** @return \Generator<int, array{0: string, 1: string}> */
    private function walk(string $root, string $dir): \Generator
    {
        $names = @\scandir($dir);
        if ($names === false) {
            return;
        }
        foreach ($names as $name) {
            if ($name === '.' || $name === '..') {
                continue;
            }
            $path = $dir . '/' . $name;
            if (\is_dir($path)) {
                if (!\is_link($path) && $this->enters($root, $path)) {
                    yield from $this->walk($root, $path);
                }
            } elseif ($this->counts($root, $path)) {
                yield [$root, $path];
            }
        }
    }
}
