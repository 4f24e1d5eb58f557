<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * PHP's output buffers follow the coroutine that opened them.
 *
 * The buffer stack (ob_start()) is one per process. A coroutine that waits with a buffer open (a view
 * that renders into ob_start() and queries the database in the middle, a streamed response whose
 * callback echoes, waits and echoes again) would otherwise let every coroutine that runs meanwhile
 * write into its buffer, and it would write into theirs. So when a coroutine waits, the buffers it
 * opened (those above the level it started at) are taken off the stack with what they hold, and put
 * back when it resumes, before its next echo.
 *
 * A buffer opened through start() keeps its handler across the wait (what it holds is flushed through
 * the handler when it is taken off); one opened with a plain ob_start() keeps its contents and chunk
 * size. A handler given to ob_start() directly is not visible to PHP code: it is called once as the
 * buffer ends when the buffer is taken off, and the buffer comes back without it (its contents kept):
 * open such buffers with start().
 *
 * @internal
 */
final class OutputBuffers
{
    /** @var \WeakMap<Coroutine, array<int, array{\Closure, int}>>|null handlers of buffers opened with start(), by level */
    private static ?\WeakMap $handlers = null;

    /**
     * ob_start() whose handler survives the running coroutine's waits.
     *
     * @param \Closure(string, int): string $handler
     */
    public static function start(\Closure $handler, int $chunkSize = 0): void
    {
        \ob_start($handler, $chunkSize);
        $coroutine = Scheduler::get()->current;
        if ($coroutine !== null) {
            self::$handlers ??= new \WeakMap();
            $handlers = self::$handlers[$coroutine] ?? [];
            $handlers[\ob_get_level()] = [$handler, $chunkSize];
            self::$handlers[$coroutine] = $handlers;
        }
    }

    /**
     * Takes the buffers above $base off the stack.
     *
     * @return list<array{string, int, ?\Closure}> outermost first: contents, chunk size, handler
     */
    public static function detach(Coroutine $coroutine, int $base): array
    {
        $status = \ob_get_status(true);
        $handlers = self::$handlers[$coroutine] ?? [];
        $saved = [];
        for ($level = \ob_get_level(); $level > $base; $level--) {
            $handler = $handlers[$level][0] ?? null;
            unset($handlers[$level]);
            if ($handler !== null) {
                // What it holds goes through its handler now, as it would at the next write; the handler
                // then sees an empty end, and comes back with the buffer.
                \ob_flush();
            }
            $contents = (string) \ob_get_contents();
            \ob_end_clean();
            $saved[] = [$contents, (int) ($status[$level - 1]['chunk_size'] ?? 0), $handler];
        }
        if (self::$handlers !== null && isset(self::$handlers[$coroutine])) {
            self::$handlers[$coroutine] = $handlers;
        }
        return \array_reverse($saved);
    }

    /** @param list<array{string, int, ?\Closure}> $saved what detach() took off */
    public static function attach(Coroutine $coroutine, array $saved): void
    {
        foreach ($saved as [$contents, $chunkSize, $handler]) {
            if ($handler !== null) {
                \ob_start($handler, $chunkSize);
                self::$handlers ??= new \WeakMap();
                $handlers = self::$handlers[$coroutine] ?? [];
                $handlers[\ob_get_level()] = [$handler, $chunkSize];
                self::$handlers[$coroutine] = $handlers;
            } else {
                \ob_start(null, $chunkSize);
            }
            if ($contents !== '') {
                echo $contents;
            }
        }
    }
}
