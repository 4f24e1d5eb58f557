<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\Loop\Driver;
use Weft\Socket\LineSplitter;

/**
 * A worker's stdout and stderr, redirected to the master and logged there, one record per line,
 * tagged with the worker: what an application prints on its own (echo, var_dump, error_log(), PHP
 * warnings and notices) lands in the server log instead of interleaving untagged on the terminal.
 *
 * Before fork the master creates two FIFOs per worker in a private directory and opens their read
 * ends; in the child, descriptors 1 and 2 are pointed at them with dup2(). FIFOs rather than socket
 * pairs because they can be opened by path, which is also how PHP's error_log setting names a target.
 * The master, not the worker, reads, so a worker that prints a lot in one go never blocks on itself.
 *
 * @internal used by Master
 */
final class WorkerOutput
{
    private const MAX_LINE = 8192;
    /** open(2) flags (Linux). */
    private const O_WRONLY = 01;
    private const O_CLOEXEC = 02000000;
    /** What PHP puts before each line it writes to an error_log file. */
    private const ERROR_LOG_PREFIX = '/^\[\d{2}-[A-Za-z]{3}-\d{4} \d{2}:\d{2}:\d{2} [^\]]*\] /';

    /** Longer lines are logged in pieces of MAX_LINE bytes. */
    private ?LineSplitter $lines = null;
    /** @var array<string, array{path: string, read: ?resource, buffer: string, watcher: ?string}> */
    private array $streams = [];
    private ?Logger $logger = null;
    private ?Driver $driver = null;
    private int $pid = 0;

    private function __construct()
    {
    }

    public static function create(): ?self
    {
        if (!\function_exists('posix_mkfifo')) {
            return null;
        }
        $dir = self::directory();
        if ($dir === null) {
            return null;
        }
        $output = new self();
        $id = \bin2hex(\random_bytes(6));
        foreach (['stdout', 'stderr'] as $name) {
            $path = "$dir/$id.$name";
            // Opened read-write: a FIFO's open then never blocks, and it never reads as ended while the
            // worker reopens it (error_log() opens and closes it per message).
            if (!@\posix_mkfifo($path, 0600) || ($read = @\fopen($path, 'r+')) === false) {
                @\unlink($path);
                $output->closeAll();
                return null;
            }
            $output->streams[$name] = ['path' => $path, 'read' => $read, 'buffer' => '', 'watcher' => null];
        }
        return $output;
    }

    /**
     * A 0700 directory of ours for this master's FIFOs, inside Weft's private runtime directory: another
     * user must not be able to read what workers print, nor plant files where the FIFOs go.
     */
    private static function directory(bool $create = true): ?string
    {
        try {
            $dir = RuntimeFiles::directory() . '/output-' . \getmypid();
        } catch (UnsafePath) {
            return null;
        }
        return RuntimeFiles::ensurePrivateDirectory($dir, $create) ? $dir : null;
    }

    /**
     * In the worker: descriptors 1 and 2 become the FIFOs, through dup2() (FFI): the STDOUT and STDERR
     * constants, the C library's stderr and everything else that holds descriptor 1 or 2 keep working
     * and now write to the master. Closing and reopening them instead would leave PHP's constants
     * closed, and frameworks that write to STDOUT (Laravel's dumper) would fail to boot. Without FFI,
     * only error_log() and PHP's logged warnings are redirected (by the error_log setting).
     *
     * @return list<string> the streams ("stdout", "stderr") that could not be redirected
     */
    public function redirect(Logger $logger): array
    {
        // This runs in a just-forked child: nothing may escape from here into the master's code.
        try {
            return $this->redirectStreams($logger);
        } catch (\Throwable) {
            return ['stdout', 'stderr'];
        }
    }

    /** @return list<string> */
    private function redirectStreams(Logger $logger): array
    {
        foreach ($this->streams as $stream) {
            \fclose($stream['read']);
        }
        // The worker's own log lines keep going where they went (the terminal, the journal).
        $logger->detachFromStderr();
        $failed = [];
        $libc = self::libc();
        foreach (['stdout' => 1, 'stderr' => 2] as $name => $number) {
            $fd = $libc?->open($this->streams[$name]['path'], self::O_WRONLY | self::O_CLOEXEC) ?? -1;
            if ($fd < 0) {
                $failed[] = $name;
                continue;
            }
            if ($number === 1 && \is_resource(\STDOUT)) {
                \fflush(\STDOUT);
            }
            if ($libc->dup2($fd, $number) !== $number) {
                $failed[] = $name;
            }
            $libc->close($fd);
        }
        if (\in_array('stderr', $failed, true)) {
            // error_log() and PHP's logged warnings open their target by path: tagged in any case.
            \ini_set('error_log', $this->streams['stderr']['path']);
        }
        $this->streams = [];
        return $failed;
    }

    private static function libc(): ?\FFI
    {
        if (!\extension_loaded('ffi')) {
            return null;
        }
        try {
            return \FFI::cdef('int open(const char *pathname, int flags); int dup2(int oldfd, int newfd); int close(int fd);');
        } catch (\Throwable) {
            // ffi.enable=0, or no libc symbols: stay with what works without it.
            return null;
        }
    }

    /** In the master, after fork: read and log what the worker writes. */
    public function attach(Driver $driver, Logger $logger, int $pid): void
    {
        $this->driver = $driver;
        $this->logger = $logger;
        $this->pid = $pid;
        foreach ($this->streams as $name => &$stream) {
            \stream_set_blocking($stream['read'], false);
            $stream['watcher'] = $driver->onReadable($stream['read'], fn () => $this->forward($name));
            $driver->unreference($stream['watcher']);
        }
    }

    /** In a sibling worker that inherited these: drop them. */
    public function closeAll(): void
    {
        foreach ($this->streams as $stream) {
            if (\is_resource($stream['read'])) {
                \fclose($stream['read']);
            }
        }
        $this->streams = [];
    }

    /** In the master, once the worker is gone: log what is left, then close. */
    public function close(): void
    {
        foreach (\array_keys($this->streams) as $name) {
            $this->forward($name);
            $this->flush($name, true);
            if ($this->streams[$name]['watcher'] !== null) {
                $this->driver?->cancel($this->streams[$name]['watcher']);
            }
            @\unlink($this->streams[$name]['path']);
        }
        $this->closeAll();
        // Empty once the last worker is gone (a later spawn makes it again).
        $dir = self::directory(false);
        if ($dir !== null) {
            @\rmdir($dir);
        }
    }

    /** Reads what the worker wrote and logs every complete line. */
    private function forward(string $name): void
    {
        if (!isset($this->streams[$name])) {
            return;
        }
        $stream = &$this->streams[$name];
        while (\is_resource($stream['read']) && ($chunk = @\fread($stream['read'], 65536)) !== false && $chunk !== '') {
            $stream['buffer'] .= $chunk;
            $this->flush($name, false);
        }
        if (\is_resource($stream['read']) && \feof($stream['read']) && $stream['watcher'] !== null) {
            $this->driver?->cancel($stream['watcher']);
            $stream['watcher'] = null;
        }
    }

    private function flush(string $name, bool $all): void
    {
        $buffer = &$this->streams[$name]['buffer'];
        $this->lines ??= new LineSplitter(self::MAX_LINE);
        while (($line = $this->lines->takePiece($buffer, $all)) !== null) {
            if ($name === 'stderr') {
                $line = (string) \preg_replace(self::ERROR_LOG_PREFIX, '', $line);
            }
            if ($line === '') {
                continue;
            }
            // stdout is the application talking; stderr carries error_log() and PHP's warnings.
            $this->logger?->logFor('worker', $this->pid, $name === 'stdout' ? 'info' : 'warning', "$name: $line", ['stream' => $name]);
        }
    }
}
