<?php

declare(strict_types=1);

namespace Weft\Server;

/**
 * Where the pid file, control socket and daemon log live, and how they are opened so that another user
 * of the machine cannot turn them against the operator.
 *
 * The default directory is private: $XDG_RUNTIME_DIR (a per-user 0700 directory the login manager
 * makes), /run/weft when running as root, else <tmp>/weft-UID, a 0700 directory we create and check.
 * Files are never opened through a symlink or created where another user could have put one first:
 * new files are created with O_EXCL ('x'), existing ones are checked with lstat() and the descriptor
 * opened is compared with what lstat() saw, so a swap between the check and the open is caught.
 */
final class RuntimeFiles
{
    /** The directory for default pid files and logs (created on first use). */
    public static function directory(): string
    {
        $xdg = \getenv('XDG_RUNTIME_DIR');
        if (\is_string($xdg) && $xdg !== '' && $xdg[0] === '/' && self::isPrivateDirectory($xdg)) {
            return \rtrim($xdg, '/');
        }
        $uid = \posix_geteuid();
        if ($uid === 0 && \is_dir('/run') && \is_writable('/run')) {
            return self::privateDirectory('/run/weft');
        }
        return self::privateDirectory(\rtrim(\sys_get_temp_dir(), '/') . '/weft-' . $uid);
    }

    public static function defaultPidFile(int $port): string
    {
        return self::directory() . "/weft-$port.pid";
    }

    public static function defaultLogFile(int $port): string
    {
        return self::directory() . "/weft-$port.log";
    }

    /**
     * Refuses a path whose directory another user controls: one they own (root excepted), or one they
     * may write to without the sticky bit (then they could replace our file with their own).
     *
     * @throws UnsafePath
     */
    public static function checkDirectoryOf(string $path): void
    {
        $dir = \dirname($path);
        \clearstatcache(true, $dir);
        $stat = @\stat($dir);
        if ($stat === false) {
            throw new UnsafePath("the directory '$dir' does not exist");
        }
        $uid = \posix_geteuid();
        if ($stat['uid'] !== $uid && $stat['uid'] !== 0) {
            throw new UnsafePath("the directory '$dir' belongs to another user (uid {$stat['uid']})");
        }
        $sticky = ($stat['mode'] & 01000) !== 0;
        if (($stat['mode'] & 0022) !== 0 && !$sticky) {
            throw new UnsafePath(\sprintf("the directory '%s' is writable by other users (mode %o) without the sticky bit", $dir, $stat['mode'] & 07777));
        }
    }

    /**
     * The lstat() of an existing path that is a regular file of ours, or null when nothing is there.
     *
     * @return array<string|int, int>|null
     * @throws UnsafePath for a symlink, something that is not a file, or a file of another user
     */
    public static function existingFile(string $path): ?array
    {
        \clearstatcache(true, $path);
        $stat = @\lstat($path);
        if ($stat === false) {
            return null;
        }
        $type = $stat['mode'] & 0170000;
        if ($type === 0120000) {
            throw new UnsafePath("'$path' is a symbolic link");
        }
        if ($type !== 0100000) {
            throw new UnsafePath("'$path' is not a regular file");
        }
        if ($stat['uid'] !== \posix_geteuid()) {
            throw new UnsafePath("'$path' belongs to another user (uid {$stat['uid']})");
        }
        return $stat;
    }

    /**
     * Creates $path, which must not exist, with $mode (O_CREAT|O_EXCL: a symlink planted there fails too).
     *
     * @return resource
     * @throws UnsafePath
     */
    public static function create(string $path, int $mode, string $fopenMode = 'x'): mixed
    {
        $umask = \umask(0777 & ~$mode);
        try {
            $stream = @\fopen($path, $fopenMode);
        } finally {
            \umask($umask);
        }
        if ($stream === false) {
            throw new UnsafePath("cannot create '$path': " . (\error_get_last()['message'] ?? 'unknown error'));
        }
        return $stream;
    }

    /**
     * Opens a log for appending: created 0640 when absent; when present, only if it is a regular file
     * of ours, and the very file lstat() saw.
     *
     * @return resource
     * @throws UnsafePath
     */
    public static function openLog(string $path): mixed
    {
        self::checkDirectoryOf($path);
        for ($attempt = 0; $attempt < 3; $attempt++) {
            $stat = self::existingFile($path);
            if ($stat === null) {
                $umask = \umask(0027);
                try {
                    $stream = @\fopen($path, 'x');
                } finally {
                    \umask($umask);
                }
                if ($stream !== false) {
                    // 'x' opens for writing at 0; every later writer appends (O_APPEND), so reopen so.
                    \fclose($stream);
                    continue;
                }
                continue; // someone created it in between: check what it is
            }
            $stream = @\fopen($path, 'a');
            if ($stream === false) {
                throw new UnsafePath("cannot open '$path': " . (\error_get_last()['message'] ?? 'unknown error'));
            }
            $opened = \fstat($stream);
            if ($opened === false || $opened['ino'] !== $stat['ino'] || $opened['dev'] !== $stat['dev']) {
                \fclose($stream);
                throw new UnsafePath("'$path' was replaced while it was being opened");
            }
            return $stream;
        }
        throw new UnsafePath("cannot open '$path': it keeps changing");
    }

    private static function isPrivateDirectory(string $dir): bool
    {
        \clearstatcache(true, $dir);
        $stat = @\lstat($dir);
        return $stat !== false
            && ($stat['mode'] & 0170000) === 0040000
            && $stat['uid'] === \posix_geteuid()
            && ($stat['mode'] & 0077) === 0
            && \is_writable($dir);
    }

    /**
     * Whether $dir is a directory of ours that no one else may enter (0700, our uid, writable), made so
     * first when nothing is there and $create: the one test for every private directory Weft uses.
     */
    public static function ensurePrivateDirectory(string $dir, bool $create = true): bool
    {
        if ($create && !\file_exists($dir) && !\is_link($dir)) {
            $umask = \umask(0077);
            try {
                @\mkdir($dir, 0700);
            } finally {
                \umask($umask);
            }
        }
        return self::isPrivateDirectory($dir);
    }

    private static function privateDirectory(string $dir): string
    {
        if (!self::ensurePrivateDirectory($dir)) {
            $stat = @\lstat($dir);
            throw new UnsafePath(\sprintf(
                "the runtime directory '%s' is not a private directory of ours (%s); remove it or pass --pid-file",
                $dir,
                $stat === false ? 'cannot create it' : \sprintf('uid %d, mode %o', $stat['uid'], $stat['mode'] & 07777),
            ));
        }
        return $dir;
    }
}
