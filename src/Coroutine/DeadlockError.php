<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/** The loop has nothing left to run, yet coroutines still wait: nothing could ever wake them. */
final class DeadlockError extends \Error implements \Weft\WeftException
{
    /** @param array<int, Coroutine> $coroutines */
    public static function waiting(array $coroutines): self
    {
        $lines = [];
        foreach (\array_slice($coroutines, 0, 20, true) as $coroutine) {
            $lines[] = "  coroutine #{$coroutine->id} waiting at " . self::where($coroutine);
        }
        if (\count($coroutines) > 20) {
            $lines[] = '  ... and ' . (\count($coroutines) - 20) . ' more';
        }
        return new self(
            'Deadlock: the event loop has nothing left to run but ' . \count($coroutines)
            . " coroutine(s) still wait:\n" . \implode("\n", $lines),
        );
    }

    private static function where(Coroutine $coroutine): string
    {
        $fiber = $coroutine->fiber();
        if ($fiber === null || !$fiber->isSuspended()) {
            return '(not suspended)';
        }
        $reflection = new \ReflectionFiber($fiber);
        // Each frame's file:line is where its function was called from. The first call made from outside
        // Weft's own sources is the user's wait: name that place and the function it called.
        $src = \dirname(__DIR__);
        foreach ($reflection->getTrace(\DEBUG_BACKTRACE_IGNORE_ARGS) as $frame) {
            $file = $frame['file'] ?? null;
            if ($file !== null && !\str_starts_with($file, $src)) {
                $function = isset($frame['class']) ? $frame['class'] . '::' . $frame['function'] : $frame['function'];
                return "$file:{$frame['line']} in $function()";
            }
        }
        return $reflection->getExecutingFile() . ':' . $reflection->getExecutingLine();
    }
}
