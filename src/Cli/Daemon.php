<?php

declare(strict_types=1);

namespace Weft\Cli;

/** Detaches the server: the foreground process returns once the master has written its pid file. */
final class Daemon
{
    /** @param \Closure(): int $master */
    public static function start(string $pidFile, string $logFile, \Closure $master): int
    {
        @\unlink($pidFile);
        $pid = \pcntl_fork();
        if ($pid === -1) {
            \fwrite(\STDERR, "weft: fork failed\n");
            return 1;
        }
        if ($pid > 0) {
            $deadline = \microtime(true) + 15;
            while (\microtime(true) < $deadline) {
                if (\is_file($pidFile) && \file_exists($pidFile . '.sock')) {
                    echo 'Weft started in the background, master pid ' . \trim((string) \file_get_contents($pidFile)) . ", log $logFile\n";
                    return 0;
                }
                if (\pcntl_waitpid($pid, $status, \WNOHANG) === $pid) {
                    \fwrite(\STDERR, "weft: the server exited during start; see $logFile\n");
                    return 1;
                }
                \usleep(20_000);
            }
            \fwrite(\STDERR, "weft: the server did not start within 15 s; see $logFile\n");
            return 1;
        }
        \posix_setsid();
        // Nothing may write to the terminal we left: the logger writes to the log file.
        \fclose(\STDIN);
        \fclose(\STDOUT);
        \fclose(\STDERR);
        $code = $master();
        exit($code);
    }
}
