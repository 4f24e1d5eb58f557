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
        // Made here and now, not "made if missing": in a shared directory (a pid file in /tmp) another user
        // could create the folder first, or in between, and then swap the configuration that nginx and
        // php-fpm (root, when Weft runs as root) read from it. mkdir() fails on anything already there,
        // a symlink included; what it made is ours, and no one else can rename it out of a sticky /tmp.
        $umask = \umask(0077);
        try {
            $made = @\mkdir($path, 0700);
        } finally {
            \umask($umask);
        }
        \clearstatcache(true, $path);
        $stat = @\lstat($path);
        if (!$made || $stat === false || ($stat['mode'] & 0170000) !== 0040000 || $stat['uid'] !== \posix_geteuid()) {
            throw new \RuntimeException("Cannot create the runtime folder '$path': " . ($made ? 'it was replaced' : (\error_get_last()['message'] ?? 'unknown error')));
        }
        \mkdir("$path/nginx", 0700);
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
