<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

/**
 * The folder of one fpm-mode server: configuration, sockets, pid files, nginx's temp folders.
 * A marker file says Weft made it, so removing it never touches a folder that someone else owns.
 */
final class RuntimeDirectory
{
    private const MARKER = '.weft-fpm';
    private const TEMP = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'];

    /** @throws \RuntimeException when the folder exists and is not Weft's, or cannot be made */
    public static function create(string $path): void
    {
        if (\file_exists($path)) {
            // Left behind by a server that was killed: Weft's own, so it goes.
            self::remove($path);
            if (\file_exists($path)) {
                throw new \RuntimeException("The runtime folder '$path' exists and was not made by Weft; remove it or choose another --pid-file");
            }
        }
        if (!@\mkdir($path . '/nginx', 0700, true)) {
            throw new \RuntimeException("Cannot create the runtime folder '$path': " . (\error_get_last()['message'] ?? 'unknown error'));
        }
        \chmod($path, 0700);
        foreach (self::TEMP as $temp) {
            \mkdir("$path/nginx/$temp", 0700);
        }
        \file_put_contents("$path/" . self::MARKER, "Runtime folder of a `bin/weft serve --mode fpm` server; removed when it stops.\n");
    }

    public static function remove(string $path): void
    {
        if (!\is_file($path . '/' . self::MARKER) || \is_link($path)) {
            return;
        }
        self::removeTree($path);
    }

    private static function removeTree(string $path): void
    {
        foreach (\scandir($path) ?: [] as $entry) {
            if ($entry === '.' || $entry === '..') {
                continue;
            }
            $child = "$path/$entry";
            if (\is_dir($child) && !\is_link($child)) {
                self::removeTree($child);
            } else {
                @\unlink($child);
            }
        }
        @\rmdir($path);
    }
}
