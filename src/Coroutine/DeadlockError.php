<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/** The loop has nothing left to run, yet coroutines still wait: nothing could ever wake them. */
final class DeadlockError extends \Error
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
        $fiber = $coroutine->fiber;
        if ($fiber === null || !$fiber->isSuspended()) {
            return '(not suspended)';
        }
        $reflection = new \ReflectionFiber($fiber);
        // The innermost frames are Weft's own wait primitives; name the first user frame and the wait.
        $trace = $reflection->getTrace(\DEBUG_BACKTRACE_IGNORE_ARGS);
        $wait = null;
        foreach ($trace as $frame) {
            $class = $frame['class'] ?? '';
            if (\str_starts_with($class, 'Weft\\Coroutine\\') || \str_starts_with($frame['function'], 'Weft\\')) {
                $wait = ($class !== '' ? $class . '::' : '') . $frame['function'];
                continue;
            }
            if (isset($frame['file'])) {
                return ($frame['file'] ?? '?') . ':' . ($frame['line'] ?? '?') . ($wait ? " in $wait()" : '');
            }
        }
        return $reflection->getExecutingFile() . ':' . $reflection->getExecutingLine();
    }
}
