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
