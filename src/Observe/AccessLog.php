<?php

declare(strict_types=1);

namespace Weft\Observe;

use Weft\Loop\Loop;
use Weft\Server\RuntimeFiles;
use Weft\Server\UnsafePath;

/**
 * The access log (--access-log FILE|-): one line per HTTP request, written once its response is complete.
 *
 * combined (Apache/nginx Combined Log Format, the duration and worker appended):
 *   127.0.0.1 - - [23/Nov/2026:09:30:00 +0000] "GET /a?b=1 HTTP/1.1" 200 12 "-" "curl/7.88.1" 0.000412 1234
 * json, one object per line: time, remote, method, target, protocol, status, bytes, duration, worker,
 *   referer, user_agent, complete (false: the connection ended before the whole body was sent).
 *
 * `bytes` counts the response body handed to the connection (not the head), 0 for HEAD; `duration` is
 * seconds from the start of the request's handling to its last byte queued; `worker` is the process id.
 *
 * Lines are buffered and written once per loop tick (or at 64 KiB), so a pipelined burst costs one write.
 * The file follows the server log's rules (0640, never through a symlink) and is reopened on SIGUSR1.
 */
final class AccessLog
{
    public const FORMATS = ['combined', 'json'];
    private const FLUSH_AT = 65536;

    /** @var resource|null null in the master, which only checks that the file can be opened */
    private mixed $stream;
    private string $buffer = '';
    private bool $flushQueued = false;
    private int $pid;
    private int $second = 0;
    private string $time = '';

    /** @throws \RuntimeException when the file cannot be opened safely */
    public function __construct(
        public readonly string $file,
        public readonly string $format = 'combined',
    ) {
        if (!\in_array($format, self::FORMATS, true)) {
            throw new \InvalidArgumentException("Unknown access log format '$format' (combined or json)");
        }
        $this->pid = (int) \getmypid();
        $this->stream = $this->open();
        if ($file !== '-') {
            // The master writes no line: holding the file would keep it (its disk space) after logrotate
            // renamed and later deleted it. Workers open the file at the path in afterFork() (or at
            // their first line).
            \fclose($this->stream);
            $this->stream = null;
        }
    }

    /** In a worker after fork: its own pid, and the file that is at the path now. */
    public function afterFork(): void
    {
        $this->pid = (int) \getmypid();
        $this->buffer = '';
        $this->flushQueued = false;
        $this->reopen();
        \register_shutdown_function($this->flush(...));
    }

    /** SIGUSR1: what is buffered goes to the old file, what follows to the file at the path now. */
    public function reopen(): void
    {
        $this->flush();
        if ($this->file === '-') {
            return;
        }
        $old = $this->stream;
        try {
            $this->stream = $this->open();
        } catch (\RuntimeException $e) {
            // Keep writing to the old file rather than losing lines; the server log says why.
            \Weft\logger()->error('Cannot reopen the access log: {message}', ['message' => $e->getMessage()]);
            return;
        }
        if (\is_resource($old)) {
            \fclose($old);
        }
    }

    /**
     * One request. $method and $target are null when the server refused bytes that never made a request
     * line (shown as "-").
     */
    public function record(
        ?string $remote,
        ?string $method,
        ?string $target,
        string $version,
        int $status,
        int $bytes,
        float $seconds,
        ?string $referer = null,
        ?string $agent = null,
        bool $complete = true,
    ): void {
        $now = \time();
        if ($now !== $this->second) {
            $this->second = $now;
            $this->time = $this->format === 'json' ? \date('Y-m-d\TH:i:sP', $now) : \date('d/M/Y:H:i:s O', $now);
        }
        if ($this->format === 'json') {
            $flags = \JSON_UNESCAPED_SLASHES | \JSON_UNESCAPED_UNICODE | \JSON_INVALID_UTF8_SUBSTITUTE | \JSON_PARTIAL_OUTPUT_ON_ERROR;
            $head = \json_encode([
                'time' => $this->time, 'remote' => $remote, 'method' => $method, 'target' => $target,
                'protocol' => 'HTTP/' . $version, 'status' => $status, 'bytes' => $bytes,
            ], $flags);
            $rest = \json_encode(['worker' => $this->pid, 'referer' => $referer, 'user_agent' => $agent, 'complete' => $complete], $flags);
            // The duration written as the combined format writes it (0.000039), never as json_encode()
            // writes a small float (3.9e-5), which log pipelines that expect a decimal choke on.
            $duration = \sprintf('%.6f', \is_finite($seconds) ? \max(0.0, $seconds) : 0.0);
            $line = \substr((string) $head, 0, -1) . ',"duration":' . $duration . ',' . \substr((string) $rest, 1) . "\n";
        } else {
            $request = $method === null ? '-' : $method . ' ' . $target . ' HTTP/' . $version;
            $line = ($remote ?? '-') . ' - - [' . $this->time . '] "' . self::escape($request) . '" ' . $status . ' '
                . $bytes . ' "' . self::escape($referer ?? '-') . '" "' . self::escape($agent ?? '-') . '" '
                . \sprintf('%.6f', $seconds) . ' ' . $this->pid . ($complete ? '' : ' incomplete') . "\n";
        }
        $this->buffer .= $line;
        if (\strlen($this->buffer) >= self::FLUSH_AT) {
            $this->flush();
        } elseif (!$this->flushQueued) {
            $this->flushQueued = true;
            Loop::defer($this->flush(...));
        }
    }

    public function flush(): void
    {
        $this->flushQueued = false;
        if ($this->buffer === '') {
            return;
        }
        $buffer = $this->buffer;
        $this->buffer = '';
        if ($this->stream === null) {
            // First lines of a process that did not open the file in afterFork().
            try {
                $this->stream = $this->open();
            } catch (\RuntimeException $e) {
                \Weft\logger()->error('Cannot open the access log: {message}', ['message' => $e->getMessage()]);
                return;
            }
        }
        @\fwrite($this->stream, $buffer);
    }

    /** Quotes and controls are escaped as nginx does (\xHH), so a line is always one parseable line. */
    private static function escape(string $value): string
    {
        if (!\preg_match('/["\\\\\x00-\x1f\x7f-\xff]/', $value)) {
            return $value;
        }
        return (string) \preg_replace_callback('/["\\\\\x00-\x1f\x7f-\xff]/', static fn (array $m): string => \sprintf('\\x%02X', \ord($m[0])), $value);
    }

    /** @return resource */
    private function open(): mixed
    {
        if ($this->file === '-') {
            // A duplicate of descriptor 1 taken now, in the master: a worker's own descriptor 1 is later
            // pointed at the master's log (WorkerOutput), and access lines must not become log records.
            return \fopen('php://stdout', 'a') ?: throw new \RuntimeException('Cannot open stdout');
        }
        try {
            $stream = RuntimeFiles::openLog($this->file);
        } catch (UnsafePath $e) {
            throw new \RuntimeException("Cannot open the access log '{$this->file}': " . $e->getMessage(), 0, $e);
        }
        // Our own buffer decides when to write: PHP's would split a large batch into 8 KiB writes.
        \stream_set_write_buffer($stream, 0);
        return $stream;
    }
}
