<?php

declare(strict_types=1);

namespace Weft\Socket\Tls;

/**
 * Private copies of the certificate and key files a worker checked, which are the ones it serves.
 *
 * PHP's OpenSSL layer reads local_cert and local_pk from their paths again for every connection (it
 * builds an SSL_CTX per connection). Pointed at the operator's files, a worker would start serving a
 * renewed certificate the moment it is written, before any reload, and a renewed key that does not
 * match would break every handshake of the running workers, while the reload meant to refuse it still
 * lay ahead. So each worker serves copies taken when it checked them: renewals take effect at the
 * reload, and a bad pair fails that reload while the old workers serve on with what they checked.
 *
 * The copies live in a directory of this process (0700, files 0600), removed when the worker exits;
 * those of a worker that was killed are removed by the next worker that pins files. (A descriptor of
 * an unlinked file, /proc/PID/fd/N, would leave nothing behind, but PHP resolves the path to the
 * deleted name before OpenSSL opens it.)
 */
final class PinnedFiles
{
    private const PREFIX = 'weft-tls-';

    private ?string $dir = null;
    private int $count = 0;

    /** Copies $contents to a private file and returns its path. @throws TlsConfigError */
    public function pin(string $contents, string $suffix): string
    {
        $dir = $this->dir ??= $this->createDirectory();
        $path = $dir . '/' . $this->count++ . '-' . $suffix;
        $handle = @\fopen($path, 'x');
        if ($handle === false || @\chmod($path, 0600) === false || @\fwrite($handle, $contents) !== \strlen($contents)) {
            throw new TlsConfigError("Cannot write a private copy of the TLS files under $dir");
        }
        \fclose($handle);
        return $path;
    }

    /** Removes the copies (the worker exits). */
    public function remove(): void
    {
        if ($this->dir !== null) {
            self::removeDirectory($this->dir);
            $this->dir = null;
        }
    }

    private function createDirectory(): string
    {
        $base = \sys_get_temp_dir();
        self::sweep($base);
        $dir = $base . '/' . self::PREFIX . \getmypid() . '-' . \bin2hex(\random_bytes(6));
        if (!@\mkdir($dir, 0700)) {
            throw new TlsConfigError("Cannot create a private directory for the TLS files under $base");
        }
        \register_shutdown_function($this->remove(...));
        return $dir;
    }

    /** Copies left by workers that no longer run (killed: no shutdown function ran). */
    private static function sweep(string $base): void
    {
        $uid = \function_exists('posix_getuid') ? \posix_getuid() : null;
        foreach (\glob($base . '/' . self::PREFIX . '*-*', \GLOB_ONLYDIR) ?: [] as $dir) {
            if (\preg_match('/-(\d+)-[0-9a-f]{12}$/', $dir, $m) !== 1 || ($uid !== null && @\fileowner($dir) !== $uid)) {
                continue;
            }
            $pid = (int) $m[1];
            if ($pid !== \getmypid() && !\file_exists("/proc/$pid")) {
                self::removeDirectory($dir);
            }
        }
    }

    private static function removeDirectory(string $dir): void
    {
        foreach (\glob($dir . '/*') ?: [] as $file) {
            @\unlink($file);
        }
        @\rmdir($dir);
    }
}
