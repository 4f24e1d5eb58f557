<?php

declare(strict_types=1);

namespace Weft\Server;

/**
 * Keeps a process's output off PHP's own output layer.
 *
 * Under the CLI SAPI the first byte that reaches PHP's output (an `echo`, a `print`, a warning
 * displayed on stdout) marks the headers as sent for the rest of the process, and a process forked
 * after that inherits the mark: header(), setcookie() and session_start() (Symfony's native
 * sessions) then fail in every request it serves. The master forks workers all its life (after
 * --max-requests, a reload, a crash), so neither it nor a worker may ever let a byte through: what
 * they print goes to descriptor 1 through this buffer's handler instead, which PHP does not count as
 * output sent.
 *
 * @internal
 */
final class StdoutGuard
{
    private function __construct(private readonly int $level)
    {
    }

    /** Everything printed from now on, until remove(), reaches descriptor 1 without marking the headers as sent. */
    public static function install(): self
    {
        // Descriptor 1 through a stream of its own, opened on the first write: a daemon has closed
        // PHP's STDOUT constant, and a worker points descriptor 1 at its log pipe after the fork.
        $stdout = null;
        // Chunk size 1: the handler runs on every write, so nothing waits in the buffer (a forked
        // child would otherwise inherit it and print it a second time).
        \ob_start(static function (string $chunk) use (&$stdout): string {
            if ($chunk !== '') {
                $stdout ??= @\fopen('php://stdout', 'w') ?: false;
                if ($stdout !== false) {
                    @\fwrite($stdout, $chunk);
                }
            }
            return '';
        }, 1);
        return new self(\ob_get_level());
    }

    /** Ends this buffer, and any left open above it (nothing is held in them: see install()). */
    public function remove(): void
    {
        while (\ob_get_level() >= $this->level && \ob_get_level() > 0) {
            \ob_end_flush();
        }
    }
}
