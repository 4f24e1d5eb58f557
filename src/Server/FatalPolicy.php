<?php

declare(strict_types=1);

namespace Weft\Server;

use Psr\Log\LoggerInterface;

/**
 * What a worker does when PHP ends it: a fatal error (the memory limit, an engine error) or an exit()
 * the exit hook did not catch. The log line names the request that was running, the requests still in
 * flight are answered (its own a 500, the others a 503 with Connection: close) rather than left as empty
 * replies, and the master replaces the worker.
 *
 * @internal installed by Worker, in each worker before the application loads
 */
final class FatalPolicy
{
    private const FATAL = \E_ERROR | \E_CORE_ERROR | \E_COMPILE_ERROR | \E_USER_ERROR;

    /** @param int|null $memoryLimit the worker's memory_limit in bytes, named in the log line (null or 0: none given) */
    public static function install(LoggerInterface $logger, ?int $memoryLimit): void
    {
        \register_shutdown_function(static function () use ($logger, $memoryLimit): void {
            self::shutdown(\error_get_last(), $logger, $memoryLimit);
        });
    }

    /**
     * The worker ends: $error is error_get_last() at that moment.
     *
     * @param array{type: int, message: string, file: string, line: int}|null $error
     */
    public static function shutdown(?array $error, LoggerInterface $logger, ?int $memoryLimit): void
    {
        if ($error === null || ($error['type'] & self::FATAL) === 0) {
            // No fatal error: the worker ends normally, unless a request called exit() (without the exit
            // hook: no native extension, --hooks without exit, sync mode). Then say so, and answer it and
            // the others in flight rather than leave them empty replies.
            $culprit = InFlight::current();
            if ($culprit !== null) {
                $answered = InFlight::abandon();
                $logger->error('exit() in {request} ends the worker, which is replaced; {others} other request(s) in flight get a 503', [
                    'request' => $culprit, 'others' => \max(0, $answered - 1),
                ]);
            }
            return;
        }
        // Some room to say so: the limit was just hit.
        \ini_set('memory_limit', '-1');
        // The request it happened in first (when the loop knows it), then the oldest others.
        $running = \array_map(static fn (array $r): string => $r['request'], InFlight::oldest());
        if (($culprit = InFlight::current()) !== null) {
            $same = \array_search($culprit, $running, true);
            if ($same !== false) {
                unset($running[$same]);
            }
            $running = [$culprit, ...$running];
        }
        $memory = \str_contains($error['message'], 'Allowed memory size') && $memoryLimit !== null && $memoryLimit > 0
            ? \sprintf(' (--memory-limit %dM)', \intdiv($memoryLimit, 1024 * 1024))
            : '';
        $logger->critical('Fatal error{memory} while running {running}: {message} in {file}:{line}; the worker exits and is replaced', [
            'memory' => $memory, 'running' => $running === [] ? 'no request' : \implode(', ', $running),
            'message' => $error['message'], 'file' => $error['file'], 'line' => $error['line'],
        ]);
        // Its request gets a 500 and the others of this worker a 503 (Connection: close), not an empty reply.
        InFlight::abandon();
    }
}
