<?php

declare(strict_types=1);

namespace Weft\Coroutine;

use Weft\Ext\OutputStack;

/**
 * PHP's output buffers follow the coroutine that opened them.
 *
 * The buffer stack (ob_start()) is one per process. A coroutine that waits with a buffer open (a view
 * that renders into ob_start() and queries the database in the middle, a streamed response whose
 * callback echoes, waits and echoes again) would otherwise let every coroutine that runs meanwhile
 * write into its buffer, and it would write into theirs. So when a coroutine waits, the buffers it
 * opened (those above the level it started at) are taken off the stack, and put back when it resumes,
 * before its next echo.
 *
 * With the extension (Weft\Ext\OutputStack) the handlers themselves move: callbacks, chunk sizes and
 * a handler that was running when its coroutine waited (a streamed body's handler writing to a slow
 * client) included. Without it, only what PHP code can see moves: a buffer's contents and chunk size,
 * and the handler of a buffer opened with start(); a handler given to ob_start() directly is called
 * as the buffer ends and the buffer comes back without it, and a coroutine waiting inside a handler
 * leaves its buffers in place (PHP code cannot take a running handler off the stack).
 *
 * @internal
 */
final class OutputBuffers
{
    private static ?bool $native = null;

    /** @var \WeakMap<Coroutine, array<int, array{\Closure, int}>>|null pure PHP: handlers of buffers opened with start(), by level */
    private static ?\WeakMap $handlers = null;

    /** @var \WeakMap<Coroutine, int>|null pure PHP: how deep each coroutine is inside start()'s handlers */
    private static ?\WeakMap $inHandler = null;

    /**
     * ob_start() whose handler survives the running coroutine's waits.
     *
     * @param \Closure(string, int): string $handler
     */
    public static function start(\Closure $handler, int $chunkSize = 0): void
    {
        $coroutine = Scheduler::get()->current;
        if (self::native() || $coroutine === null) {
            \ob_start($handler, $chunkSize);
            return;
        }
        $inHandler = self::$inHandler ??= new \WeakMap();
        $tracked = static function (string $chunk, int $phase) use ($handler, $coroutine, $inHandler): string {
            $inHandler[$coroutine] = ($inHandler[$coroutine] ?? 0) + 1;
            try {
                return $handler($chunk, $phase);
            } finally {
                $inHandler[$coroutine]--;
            }
        };
        \ob_start($tracked, $chunkSize);
        self::remember($coroutine, $tracked, $chunkSize);
    }

    /**
     * Takes the buffers above $base off the stack.
     *
     * @return OutputStack|list<array{string, int, ?\Closure}>|null what attach() puts back
     */
    public static function detach(Coroutine $coroutine, int $base): OutputStack|array|null
    {
        if (self::native()) {
            return OutputStack::detach($base);
        }
        if ((self::$inHandler[$coroutine] ?? 0) > 0) {
            return null;
        }
        $status = \ob_get_status(true);
        $handlers = self::$handlers[$coroutine] ?? [];
        $saved = [];
        for ($level = \ob_get_level(); $level > $base; $level--) {
            $handler = $handlers[$level][0] ?? null;
            unset($handlers[$level]);
            if ($handler !== null) {
                // What it holds goes through its handler now, as it would at the next write.
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

    /** @param OutputStack|list<array{string, int, ?\Closure}>|null $saved what detach() took off */
    public static function attach(Coroutine $coroutine, OutputStack|array|null $saved): void
    {
        if ($saved === null) {
            return;
        }
        if ($saved instanceof OutputStack) {
            $saved->attach();
            return;
        }
        foreach ($saved as [$contents, $chunkSize, $handler]) {
            \ob_start($handler, $chunkSize);
            if ($handler !== null) {
                self::remember($coroutine, $handler, $chunkSize);
            }
            if ($contents !== '') {
                echo $contents;
            }
        }
    }

    private static function native(): bool
    {
        return self::$native ??= \class_exists(OutputStack::class, false);
    }

    private static function remember(Coroutine $coroutine, \Closure $handler, int $chunkSize): void
    {
        self::$handlers ??= new \WeakMap();
        $handlers = self::$handlers[$coroutine] ?? [];
        $handlers[\ob_get_level()] = [$handler, $chunkSize];
        self::$handlers[$coroutine] = $handlers;
    }
}
