<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\Loop\Driver;

/**
 * A worker's stdout and stderr, redirected to the master and logged there, one record per line,
 * tagged with the worker: what an application prints on its own (echo, var_dump, error_log(), PHP
 * warnings and notices) lands in the server log instead of interleaving untagged on the terminal.
 *
 * Before fork the master creates two FIFOs per worker in a private directory and opens their read ends.
 * In the child, descriptors 1 and 2 are closed and the FIFOs opened in their place (PHP has no dup2(),
 * but open() returns the lowest free descriptor, which is the one just closed), and PHP's `error_log`
 * setting points at the stderr FIFO: closing STDERR also closes the C library's stderr, which is where
 * PHP would otherwise send error_log() and logged warnings. FIFOs rather than socket pairs because
 * PHP's error_log opens its target by path for every message. The master, not the worker, reads, so a
 * worker that prints a lot in one go can never block on itself.
 *
 * In the worker, the STDOUT and STDERR constants refer to the closed originals afterwards; PHP-FPM
 * applications never had them, and `php://stdout` / `php://stderr` open the redirected descriptors.
 *
 * @internal used by Master
 */
final class WorkerOutput
{
    private const MAX_LINE = 8192;
    /** What PHP puts before each line it writes to an error_log file. */
    private const ERROR_LOG_PREFIX = '/^\[\d{2}-[A-Za-z]{3}-\d{4} \d{2}:\d{2}:\d{2} [^\]]*\] /';

    /** @var array<string, array{path: string, read: ?resource, buffer: string, watcher: ?string}> */
    private array $streams = [];
    /** @var list<resource> keeps the child's new descriptors 1 and 2 open */
    private array $held = [];
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
        if ($create && !\file_exists($dir) && !\is_link($dir)) {
            $umask = \umask(0077);
            try {
                @\mkdir($dir, 0700);
            } finally {
                \umask($umask);
            }
        }
        \clearstatcache(true, $dir);
        $stat = @\lstat($dir);
        $private = $stat !== false && ($stat['mode'] & 0170000) === 0040000
            && $stat['uid'] === \posix_geteuid() && ($stat['mode'] & 0077) === 0;
        return $private ? $dir : null;
    }

    /**
     * In the worker: descriptors 1 and 2 become the FIFOs.
     *
     * @return list<string> the streams ("stdout", "stderr") that could not be redirected
     */
    public function redirect(Logger $logger): array
    {
        foreach ($this->streams as $stream) {
            \fclose($stream['read']);
        }
        // open() takes the lowest free descriptor: 0 must be taken for 1 and 2 to land where they should
        // (a daemon closed stdin).
        if (!\file_exists('/proc/self/fd/0')) {
            $this->held[] = \fopen('/dev/null', 'r');
        }
        // The worker's own log lines keep going where they went (the terminal, the journal).
        $logger->detachFromStderr();
        $failed = [];
        foreach (['stdout' => [\STDOUT, 1], 'stderr' => [\STDERR, 2]] as $name => [$constant, $number]) {
            if (\is_resource($constant)) {
                \fflush($constant);
                \fclose($constant);
            }
            $stream = @\fopen($this->streams[$name]['path'], 'w');
            if ($stream !== false) {
                $this->held[] = $stream;
            }
            // Descriptor $number may be held by something we cannot close (a daemon's stdio kept on the
            // log file): then the open went elsewhere, and that stream's output stays where it goes.
            if ($stream === false || @\readlink("/proc/self/fd/$number") !== $this->streams[$name]['path']) {
                $failed[] = $name;
            }
        }
        // error_log() and PHP's logged warnings open the target by path: tagged in any case.
        \ini_set('error_log', $this->streams['stderr']['path']);
        $this->streams = [];
        return $failed;
    }

    /** In the master, after fork: read and log what the worker writes. */
    public function attach(Driver $driver, Logger $logger, int $pid): void
    {
        $this->driver = $driver;
        $this->logger = $logger;
        $this->pid = $pid;
        foreach ($this->streams as $name => &$stream) {
            \stream_set_blocking($stream['read'], false);
            $stream['watcher'] = $driver->onReadable($stream['read'], fn () => $this->drain($name));
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
            $this->drain($name);
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

    private function drain(string $name): void
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
        while (($end = \strpos($buffer, "\n")) !== false || \strlen($buffer) > self::MAX_LINE || ($all && $buffer !== '')) {
            $take = $end === false ? \min(\strlen($buffer), self::MAX_LINE) : $end;
            $line = \rtrim(\substr($buffer, 0, $take), "\r");
            if ($name === 'stderr') {
                $line = (string) \preg_replace(self::ERROR_LOG_PREFIX, '', $line);
            }
            $buffer = (string) \substr($buffer, $take + ($end === false ? 0 : 1));
            if ($line === '') {
                continue;
            }
            // stdout is the application talking; stderr carries error_log() and PHP's warnings.
            $this->logger?->logFor('worker', $this->pid, $name === 'stdout' ? 'info' : 'warning', "$name: $line", ['stream' => $name]);
        }
    }
}
