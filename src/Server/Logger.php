<?php

declare(strict_types=1);

namespace Weft\Server;

use Psr\Log\AbstractLogger;
use Psr\Log\LogLevel;

/** One line per record: "2026-11-21T10:00:00.123+00:00 [worker 1234] error: message {context}". */
final class Logger extends AbstractLogger
{
    private const LEVELS = [
        LogLevel::DEBUG => 0, LogLevel::INFO => 1, LogLevel::NOTICE => 2, LogLevel::WARNING => 3,
        LogLevel::ERROR => 4, LogLevel::CRITICAL => 5, LogLevel::ALERT => 6, LogLevel::EMERGENCY => 7,
    ];

    /** @var resource */
    private mixed $stream;
    private string $role = 'master';
    private readonly int $minimum;

    public function __construct(?string $file = null, string $level = LogLevel::INFO)
    {
        $this->minimum = self::LEVELS[$level] ?? throw new \InvalidArgumentException("Unknown log level '$level'");
        $this->open($file);
    }

    public static function stderr(string $level = LogLevel::INFO): self
    {
        return new self(null, $level);
    }

    /** Reopens the file (after fork, or for log rotation) and names the process in every line. */
    public function setRole(string $role, ?string $file = null): void
    {
        $this->role = $role;
        if ($file !== null) {
            $this->open($file);
        }
    }

    public function log($level, \Stringable|string $message, array $context = []): void
    {
        if ((self::LEVELS[$level] ?? 4) < $this->minimum) {
            return;
        }
        $line = \sprintf(
            "%s [%s %d] %s: %s",
            (new \DateTimeImmutable())->format('Y-m-d\TH:i:s.vP'),
            $this->role,
            \getmypid(),
            $level,
            self::interpolate((string) $message, $context),
        );
        if (isset($context['exception']) && $context['exception'] instanceof \Throwable) {
            $line .= "\n" . $context['exception'];
        }
        @\fwrite($this->stream, $line . "\n");
    }

    private function open(?string $file): void
    {
        if ($file === null) {
            $this->stream = \STDERR;
            return;
        }
        if (\str_contains($file, '://')) {
            $stream = @\fopen($file, 'a');
            if ($stream === false) {
                throw new \RuntimeException("Cannot open the log file '$file': " . (\error_get_last()['message'] ?? 'unknown error'));
            }
            $this->stream = $stream;
            return;
        }
        // The log holds request targets and exception messages: 0640, never through a planted symlink.
        try {
            $this->stream = RuntimeFiles::openLog($file);
        } catch (UnsafePath $e) {
            throw new \RuntimeException("Cannot open the log file '$file': " . $e->getMessage(), 0, $e);
        }
    }

    private static function interpolate(string $message, array $context): string
    {
        if (!\str_contains($message, '{')) {
            return $message;
        }
        $replace = [];
        foreach ($context as $key => $value) {
            if ($value === null || \is_scalar($value) || $value instanceof \Stringable) {
                $replace['{' . $key . '}'] = (string) $value;
            }
        }
        return \strtr($message, $replace);
    }
}
