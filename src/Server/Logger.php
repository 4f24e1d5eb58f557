<?php

declare(strict_types=1);

namespace Weft\Server;

use Psr\Log\AbstractLogger;
use Psr\Log\LogLevel;

/**
 * The server's PSR-3 logger: one record per line (an exception adds its indented trace in text).
 *
 * text: "2026-11-21T10:00:00.123+00:00 [worker 1234] error: message"
 * json: {"time":"…","level":"error","role":"worker","pid":1234,"message":"…","context":{…},"exception":{…}}
 *
 * The file is reopened on reopen() (SIGUSR1, for logrotate) and after fork, so every process writes to
 * the file that is at the path now, not to a renamed one.
 */
final class Logger extends AbstractLogger
{
    public const LEVELS = [
        LogLevel::DEBUG => 0, LogLevel::INFO => 1, LogLevel::NOTICE => 2, LogLevel::WARNING => 3,
        LogLevel::ERROR => 4, LogLevel::CRITICAL => 5, LogLevel::ALERT => 6, LogLevel::EMERGENCY => 7,
    ];
    public const FORMATS = ['text', 'json'];
    private const JSON_FLAGS = \JSON_UNESCAPED_SLASHES | \JSON_UNESCAPED_UNICODE | \JSON_INVALID_UTF8_SUBSTITUTE | \JSON_PARTIAL_OUTPUT_ON_ERROR;
    /** How deep an array in a JSON record's context may go. */
    private const CONTEXT_DEPTH = 16;

    /** @var resource */
    private mixed $stream;
    private string $role = 'master';
    private readonly int $minimum;

    public function __construct(
        private ?string $file = null,
        string $level = LogLevel::INFO,
        private readonly string $format = 'text',
    ) {
        $this->minimum = self::LEVELS[$level] ?? throw new \InvalidArgumentException("Unknown log level '$level'");
        if (!\in_array($format, self::FORMATS, true)) {
            throw new \InvalidArgumentException("Unknown log format '$format' (text or json)");
        }
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
            $this->file = $file;
            $this->open($file);
        }
    }

    /**
     * Opens the log file again: after logrotate renamed it, lines go to the new file at the path. A file
     * that cannot be opened keeps the old stream (and says so in it), rather than losing the log.
     */
    public function reopen(): void
    {
        if ($this->file === null) {
            return;
        }
        $old = $this->stream;
        try {
            $this->open($this->file);
        } catch (\RuntimeException $e) {
            $this->stream = $old;
            $this->error('Cannot reopen the log: {message}', ['message' => $e->getMessage()]);
            return;
        }
        if ($old !== $this->stream && \is_resource($old) && $old !== \STDERR) {
            \fclose($old);
        }
    }

    /**
     * Keeps writing to this process's stderr after the descriptor itself is redirected (a worker's
     * stderr goes to the master, which tags it): writes go to a duplicate of the descriptor taken now.
     */
    public function detachFromStderr(): void
    {
        if ($this->file === null && $this->stream === \STDERR) {
            $this->stream = \fopen('php://stderr', 'a') ?: \STDERR;
        }
    }

    public function log($level, \Stringable|string $message, array $context = []): void
    {
        $this->record((string) $level, (string) $message, $context, $this->role, (int) \getmypid());
    }

    /** A record on behalf of another process (a worker's stdout or stderr, read by the master). */
    public function logFor(string $role, int $pid, string $level, string $message, array $context = []): void
    {
        $this->record($level, $message, $context, $role, $pid);
    }

    private function record(string $level, string $message, array $context, string $role, int $pid): void
    {
        if ((self::LEVELS[$level] ?? 4) < $this->minimum) {
            return;
        }
        $time = (new \DateTimeImmutable())->format('Y-m-d\TH:i:s.vP');
        $exception = isset($context['exception']) && $context['exception'] instanceof \Throwable ? $context['exception'] : null;
        if ($this->format === 'json') {
            $fields = ['time' => $time, 'level' => $level, 'role' => $role, 'pid' => $pid, 'message' => self::interpolate($message, $context)];
            $extra = self::scalars($context);
            if ($extra !== []) {
                $fields['context'] = $extra;
            }
            if ($exception !== null) {
                $fields['exception'] = ExceptionTrace::describe($exception);
            }
            $line = \json_encode($fields, self::JSON_FLAGS);
            if ($line === false) {
                // Never a blank line instead of the record: without what could not be encoded.
                unset($fields['context'], $fields['exception']);
                $line = (string) \json_encode($fields, self::JSON_FLAGS);
            }
        } else {
            $text = self::interpolate($message, $context);
            $line = \sprintf('%s [%s] %s: %s', $time, $pid > 0 ? "$role $pid" : $role, $level, self::oneLine($text));
            if ($exception !== null) {
                // Once: when the message already quotes the exception, the trace does not repeat it.
                $named = $exception->getMessage() !== '' && \str_contains($text, $exception->getMessage());
                $line .= "\n" . ExceptionTrace::text($exception, !$named);
            }
        }
        @\fwrite($this->stream, $line . "\n");
    }

    /**
     * A text record is one line that starts with its time, followed only by indented trace lines. A
     * message carries request data (a decoded `%0A` in a query the application logs, an exception
     * message quoting input): its line breaks and other control characters are written as `\n`, `\r`,
     * `\xHH`, so no input can forge a record or send escape sequences to an operator's terminal.
     */
    public static function oneLine(string $text): string
    {
        if (!\preg_match('/[\x00-\x08\x0a-\x1f\x7f]/', $text)) {
            return $text;
        }
        return (string) \preg_replace_callback('/[\x00-\x08\x0a-\x1f\x7f]/', static fn (array $m): string => match ($m[0]) {
            "\n" => '\n',
            "\r" => '\r',
            default => \sprintf('\x%02X', \ord($m[0])),
        }, $text);
    }

    private function open(?string $file): void
    {
        if ($file === null) {
            // php-fpm has no STDERR constant.
            $this->stream = \defined('STDERR') ? \STDERR : (\fopen('php://stderr', 'a') ?: throw new \RuntimeException('Cannot open stderr'));
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
        // A FIFO of ours (fpm mode's log pipe, read by the supervisor) holds nothing: open it as it is.
        $stat = @\lstat($file);
        if ($stat !== false && ($stat['mode'] & 0170000) === 0010000 && $stat['uid'] === \posix_geteuid()) {
            $stream = @\fopen($file, 'a');
            if ($stream === false) {
                throw new \RuntimeException("Cannot open the log pipe '$file': " . (\error_get_last()['message'] ?? 'unknown error'));
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

    /** @return array<string, mixed> the context values a JSON record can carry as they are */
    private static function scalars(array $context): array
    {
        $out = [];
        foreach ($context as $key => $value) {
            if ($key === 'exception') {
                continue;
            }
            if ($value === null || \is_scalar($value)) {
                $out[(string) $key] = $value;
            } elseif ($value instanceof \Stringable) {
                $out[(string) $key] = (string) $value;
            } elseif ((\is_array($value) || $value instanceof \JsonSerializable) && \json_encode($value, \JSON_INVALID_UTF8_SUBSTITUTE, self::CONTEXT_DEPTH) !== false) {
                // Structured context (['user' => ['id' => 7]]) is what a JSON log is for.
                $out[(string) $key] = $value;
            }
        }
        return $out;
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
