<?php

declare(strict_types=1);

namespace Weft\Mode;

/**
 * Loads an application file: a PHP file that returns its handler. For HTTP that is a closure
 * `fn (Request): Response` or a PSR-15 RequestHandlerInterface; for the line protocol a closure
 * `fn (string $line, Connection $c): ?string`. Loaded in each worker, after fork, so a reload picks up
 * new code.
 */
final class AppLoader
{
    /**
     * Drops from opcache every script that changed on disk since it was compiled, so that a worker of a
     * new generation loads what is on disk now.
     *
     * Needed because the workers are forked from the master and share its opcache, and in the CLI the
     * "request time" that opcache.revalidate_freq counts from is the master's start: after the first
     * load, opcache would never look at the files again and every reload would run the old code. Only
     * scripts this process has not loaded yet are checked (Weft's own classes are the master's), and
     * only changed ones are dropped, so a reload costs one stat() per cached file.
     *
     * @return int how many scripts were dropped
     */
    public static function forgetChangedScripts(): int
    {
        if (!\function_exists('opcache_get_status') || !\ini_get('opcache.enable_cli')) {
            return 0;
        }
        $status = @\opcache_get_status(true);
        if (!\is_array($status) || !isset($status['scripts'])) {
            return 0;
        }
        $loaded = \array_flip(\get_included_files());
        $dropped = 0;
        \clearstatcache();
        foreach ($status['scripts'] as $script) {
            $path = $script['full_path'] ?? null;
            // Without a timestamp, opcache.validate_timestamps is off: the operator chose not to revalidate.
            if (!\is_string($path) || isset($loaded[$path]) || !isset($script['timestamp'])) {
                continue;
            }
            $mtime = @\filemtime($path);
            if ($mtime === false || $mtime !== $script['timestamp']) {
                \opcache_invalidate($path, true);
                $dropped++;
            }
        }
        return $dropped;
    }

    public static function load(string $file): object
    {
        $path = \realpath($file);
        if ($path === false || !\is_file($path)) {
            throw new AppError("Application file '$file' not found");
        }
        $app = (static fn (string $__file) => require $__file)($path);
        if ($app instanceof \Closure || $app instanceof \Psr\Http\Server\RequestHandlerInterface) {
            return $app;
        }
        if (\is_callable($app)) {
            return \Closure::fromCallable($app);
        }
        throw new AppError(\sprintf(
            "Application file '%s' must return a handler (a closure or a PSR-15 RequestHandlerInterface), got %s",
            $file,
            \get_debug_type($app),
        ));
    }
}
