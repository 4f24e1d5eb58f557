<?php

declare(strict_types=1);

namespace Weft\Server;

/**
 * An exception as an operator wants it in a log: class, message, where it was thrown, and the
 * application's frames first. A handler's exception passes through two dozen of Weft's own frames
 * (executor, HTTP handler, coroutine scheduler, event loop, master, CLI) that say nothing about the
 * failure; they are counted, not listed. Chained exceptions ("previous") follow, each the same way.
 */
final class ExceptionTrace
{
    /** @param bool $withHeadline false when the log message already names the exception */
    public static function text(\Throwable $e, bool $withHeadline = true): string
    {
        $lines = [];
        $first = true;
        for ($current = $e; $current !== null; $current = $current->getPrevious()) {
            $data = self::describe($current);
            if (!$first || $withHeadline) {
                // Indented like every line after a record's first, so a log reader can tell records apart.
                $lines[] = ($first ? '  ' : '  Caused by: ') . $data['class'] . ': ' . Logger::oneLine($data['message']);
            }
            $lines[] = '  at ' . Logger::oneLine($data['file']) . ':' . $data['line'];
            foreach ($data['trace'] as $frame) {
                $lines[] = '  #' . Logger::oneLine($frame);
            }
            if ($data['weft_frames'] > 0) {
                $lines[] = '  (+' . $data['weft_frames'] . " frame(s) in Weft)";
            }
            $first = false;
        }
        return \implode("\n", $lines);
    }

    /**
     * @return array{class: string, message: string, code: int|string, file: string, line: int, trace: list<string>, weft_frames: int, previous?: array<string, mixed>}
     */
    public static function describe(\Throwable $e): array
    {
        $trace = [];
        $weft = 0;
        foreach ($e->getTrace() as $frame) {
            $file = $frame['file'] ?? null;
            if ($file === null || self::isOwn($file)) {
                // "[internal function]" frames sit between Weft's own (Fiber::resume, closures).
                $weft++;
                continue;
            }
            $call = ($frame['class'] ?? '') . ($frame['type'] ?? '') . $frame['function'] . '()';
            $trace[] = "$file:" . ($frame['line'] ?? 0) . " $call";
        }
        $data = [
            'class' => $e::class,
            'message' => $e->getMessage(),
            'code' => $e->getCode(),
            'file' => $e->getFile(),
            'line' => $e->getLine(),
            'trace' => $trace,
            'weft_frames' => $weft,
        ];
        if ($e->getPrevious() !== null) {
            $data['previous'] = self::describe($e->getPrevious());
        }
        return $data;
    }

    /**
     * One line for an operator's terminal: "Class: message in FILE:LINE", the place being where it was
     * thrown, or, when Weft threw it (an application file that returns no handler), the nearest
     * frame of the application's.
     */
    public static function summary(\Throwable $e): string
    {
        $where = null;
        if (!self::isOwn($e->getFile())) {
            $where = $e->getFile() . ':' . $e->getLine();
        } else {
            foreach ($e->getTrace() as $frame) {
                if (isset($frame['file']) && !self::isOwn($frame['file'])) {
                    $where = $frame['file'] . ':' . ($frame['line'] ?? 0);
                    break;
                }
            }
        }
        return $e::class . ': ' . $e->getMessage() . ($where === null ? '' : ' in ' . $where);
    }

    private static function isOwn(string $file): bool
    {
        foreach ([\dirname(__DIR__) . '/', \dirname(__DIR__, 2) . '/bin/'] as $dir) {
            if (\str_starts_with($file, $dir)) {
                return true;
            }
        }
        return false;
    }
}
