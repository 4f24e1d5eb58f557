<?php

declare(strict_types=1);

namespace Weft\Cli;

use Weft\Server\RuntimeFiles;

/**
 * Detaches the server. The foreground process returns only once the outcome is known: every worker of
 * the first generation serving (exit 0), or the reason it cannot (exit 1), which the master sends back
 * over a socket pair. A start that "succeeds" while every worker crashes at boot is a lie to scripts.
 */
final class Daemon
{
    private const O_WRONLY = 01;
    private const O_RDWR = 02;
    private const O_APPEND = 02000;
    private const O_CLOEXEC = 02000000;

    /** The descriptors 0, 1 and 2 of the detached process: kept referenced so PHP never closes them. */
    private static array $stdio = [];

    /**
     * @param \Closure(\Closure(string): void, \Closure(string): void): int $master runs the master with
     *        an "all workers ready" and a "cannot start" callback
     */
    public static function start(string $pidFile, string $logFile, \Closure $master, float $timeout = 60.0): int
    {
        $pair = \stream_socket_pair(\STREAM_PF_UNIX, \STREAM_SOCK_STREAM, \STREAM_IPPROTO_IP);
        if ($pair === false) {
            \fwrite(\STDERR, "weft: cannot create a socket pair\n");
            return 1;
        }
        [$parentEnd, $childEnd] = $pair;
        $pid = \pcntl_fork();
        if ($pid === -1) {
            \fwrite(\STDERR, "weft: fork failed\n");
            return 1;
        }
        if ($pid > 0) {
            \fclose($childEnd);
            return self::awaitOutcome($pid, $parentEnd, $logFile, $timeout);
        }
        \fclose($parentEnd);
        // The realpath cache came with the fork: /proc/self in it is the foreground process, which is
        // about to exit (error_log's /proc/self/fd/2 below would point at it).
        \clearstatcache(true);
        \posix_setsid();
        self::redirectStdio($logFile);
        $report = static function (string $line) use (&$childEnd): void {
            if (\is_resource($childEnd)) {
                @\fwrite($childEnd, $line . "\n");
                @\fclose($childEnd);
            }
        };
        $code = $master(
            static fn (string $address) => $report('READY ' . $address),
            static fn (string $reason) => $report('FAILED ' . \str_replace(["\r", "\n"], ' ', $reason)),
        );
        $report('FAILED the master exited with code ' . $code);
        exit($code);
    }

    /**
     * stdin from /dev/null, stdout and stderr onto the log: the terminal we left is gone, and a closed
     * descriptor 1 would turn the first `echo` of a handler into a dead worker (the CLI exits when a
     * write to stdout fails). What the app prints, error_log() and PHP's warnings all land in the log.
     *
     * The log is put onto descriptors 0, 1 and 2 with dup2() (FFI) so that PHP's STDIN, STDOUT and
     * STDERR constants stay open: code written for the CLI writes to them (a logger on STDERR, a dumper
     * on STDOUT), and a closed constant would make each such write a TypeError in the handler.
     */
    private static function redirectStdio(string $logFile): void
    {
        try {
            $log = RuntimeFiles::openLog($logFile);
        } catch (\Throwable) {
            $log = null;
        }
        if (self::dupOntoStdio($log === null ? null : $logFile, $log)) {
            if ($log !== null) {
                \fclose($log);
            }
            return;
        }
        \fclose(\STDIN);
        \fclose(\STDOUT);
        \fclose(\STDERR);
        // The lowest free descriptors are taken in order: 0, 1, 2 (the log, opened above, holds a
        // higher one and is reopened here in order).
        self::$stdio = [\fopen('/dev/null', 'r')];
        try {
            self::$stdio[] = RuntimeFiles::openLog($logFile);
            self::$stdio[] = RuntimeFiles::openLog($logFile);
        } catch (\Throwable) {
            self::$stdio[] = \fopen('/dev/null', 'a');
            self::$stdio[] = \fopen('/dev/null', 'a');
        }
        if (\is_resource($log)) {
            \fclose($log);
        }
        // The CLI's own error logging (error_log(), warnings) stops once its stderr stream is closed,
        // whatever descriptor 2 is now: point it at descriptor 2 by name.
        if ((string) \ini_get('error_log') === '' && \is_dir('/proc/self/fd')) {
            \ini_set('error_log', '/proc/self/fd/2');
        }
    }

    /**
     * Descriptor 0 from /dev/null, 1 and 2 onto the log (already opened safely as $log; its path is
     * opened again by the C library and checked to be the same file), or onto /dev/null without a log.
     *
     * @param resource|null $log
     * @return bool false when FFI is not available (the caller closes and reopens instead)
     */
    private static function dupOntoStdio(?string $logFile, mixed $log): bool
    {
        if (!\extension_loaded('ffi')) {
            return false;
        }
        try {
            $libc = \FFI::cdef('int open(const char *pathname, int flags); int dup2(int oldfd, int newfd); int close(int fd);');
        } catch (\Throwable) {
            return false; // ffi.enable=0
        }
        $null = $libc->open('/dev/null', self::O_RDWR | self::O_CLOEXEC);
        if ($null < 0 || $libc->dup2($null, 0) !== 0) {
            return false;
        }
        $target = $logFile === null ? -1 : $libc->open($logFile, self::O_WRONLY | self::O_APPEND | self::O_CLOEXEC);
        if ($target >= 0 && \is_resource($log)) {
            // Same file as the one opened with Weft's checks (no symlink swapped in between)?
            $ours = \fstat($log);
            if ($libc->dup2($target, 1) !== 1) {
                $libc->close($target);
                $libc->close($null);
                return false;
            }
            \clearstatcache();
            $now = \fstat(\STDOUT);
            if ($ours === false || $now === false || $ours['ino'] !== $now['ino'] || $ours['dev'] !== $now['dev']) {
                $libc->close($target);
                $target = -1;
            }
        }
        $fd = $target >= 0 ? $target : $null;
        $ok = $libc->dup2($fd, 1) === 1 && $libc->dup2($fd, 2) === 2;
        if ($target >= 0) {
            $libc->close($target);
        }
        $libc->close($null);
        return $ok;
    }
    /** @param resource $channel */
    private static function awaitOutcome(int $pid, mixed $channel, string $logFile, float $timeout): int
    {
        $line = '';
        $deadline = \microtime(true) + $timeout;
        while (!\str_contains($line, "\n")) {
            $left = $deadline - \microtime(true);
            if ($left <= 0) {
                \fwrite(\STDERR, "weft: the server did not start within {$timeout} s (master pid $pid still starting); see $logFile\n");
                return 1;
            }
            $read = [$channel];
            $w = $e = null;
            // In slices: the master is our child, so its death is seen even while a worker it forked
            // still holds a copy of the channel.
            if (@\stream_select($read, $w, $e, 0, 100_000) === 0) {
                if (\pcntl_waitpid($pid, $status, \WNOHANG) === $pid) {
                    \fwrite(\STDERR, "weft: the server exited during start; see $logFile\n");
                    return 1;
                }
                continue;
            }
            $chunk = @\fread($channel, 4096);
            if ($chunk === '' || $chunk === false) {
                break; // the master exited without a word
            }
            $line .= $chunk;
        }
        $line = \trim($line);
        if (\str_starts_with($line, 'READY ')) {
            echo "Weft started in the background on " . \substr($line, 6) . ", master pid $pid, log $logFile\n";
            return 0;
        }
        // The master stops itself after a failed start; reap it if it is done.
        \pcntl_waitpid($pid, $status, \WNOHANG);
        $reason = \str_starts_with($line, 'FAILED ') ? \substr($line, 7) : 'the server exited during start';
        \fwrite(\STDERR, "weft: the server could not start: $reason (log: $logFile)\n");
        return 1;
    }
}
