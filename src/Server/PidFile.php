<?php

declare(strict_types=1);

namespace Weft\Server;

/**
 * The master's pid file, and the one test of whether a pid really is a Weft master before anyone
 * signals it: a pid file can be stale (the pid reused by another process) or planted.
 *
 * A pid counts as our master when the control socket beside the pid file answers with that pid, or,
 * when the socket cannot be reached, when /proc shows the process titled as a Weft master, holding
 * that control socket (not another master's), and started no later than the pid file was written (a
 * process that started afterwards cannot have written it).
 */
final class PidFile
{
    /** Seconds of slack between a process's start and its pid file's mtime (clock ticks, rounding). */
    private const START_SLACK = 2.0;

    public function __construct(public readonly string $path, public readonly string $title = 'weft')
    {
    }

    public function socketPath(): string
    {
        return $this->path . '.sock';
    }

    /**
     * The pid the file names, or null when there is none (absent, empty, not a number).
     *
     * @throws UnsafePath when the path is a symlink, not a file, or another user's file
     */
    public function read(): ?int
    {
        if (RuntimeFiles::existingFile($this->path) === null) {
            return null;
        }
        $content = \trim((string) @\file_get_contents($this->path, false, null, 0, 64));
        return \ctype_digit($content) && (int) $content > 0 ? (int) $content : null;
    }

    /**
     * Why $pid is not a live Weft master of this pid file, or null when it is.
     */
    public function whyNotMaster(int $pid): ?string
    {
        if (!self::alive($pid)) {
            return "no process with pid $pid is running";
        }
        $status = ControlSocket::ask($this->socketPath(), 'status', 2.0);
        if (\is_array($status) && isset($status['master']['pid'])) {
            return (int) $status['master']['pid'] === $pid
                ? null
                : "the control socket {$this->socketPath()} belongs to master pid {$status['master']['pid']}, not $pid";
        }
        $cmdline = \str_replace("\0", ' ', \trim((string) @\file_get_contents("/proc/$pid/cmdline"), "\0"));
        if (!\str_starts_with($cmdline, $this->title . ': master')) {
            return \sprintf("pid %d is not a Weft master (it runs '%s')", $pid, \substr($cmdline, 0, 80));
        }
        if (self::holdsSocket($pid, $this->socketPath()) === false) {
            // A Weft master, but another one's (its pid copied here, or a pid file of another port).
            return "pid $pid is the Weft master of another pid file (it does not hold the control socket {$this->socketPath()})";
        }
        $started = self::startedAt($pid);
        \clearstatcache(true, $this->path);
        $written = @\filemtime($this->path);
        if ($started !== null && $written !== false && $started > $written + self::START_SLACK) {
            return "pid $pid started after the pid file was written: it is another process that reused the pid";
        }
        return null;
    }

    /**
     * Whether $pid holds a unix socket bound at $path: the kernel's table of unix sockets
     * (/proc/net/unix) names each bound socket's path and inode, and the process's descriptors name the
     * inodes it holds. Works when the socket file was removed or the master is too busy to answer.
     * Null when /proc cannot tell (not Linux, or another user's process).
     */
    private static function holdsSocket(int $pid, string $path): ?bool
    {
        $descriptors = @\scandir("/proc/$pid/fd");
        $table = @\file('/proc/net/unix', \FILE_IGNORE_NEW_LINES);
        $cwd = @\readlink("/proc/$pid/cwd");
        if ($descriptors === false || $table === false || $cwd === false) {
            return null;
        }
        $wanted = self::absolute($path, (string) \getcwd());
        $inodes = [];
        foreach (\array_slice($table, 1) as $line) {
            // Num RefCount Protocol Flags Type St Inode Path (the path may hold spaces)
            $columns = \preg_split('/\s+/', \trim($line), 8);
            if ($columns !== false && isset($columns[7]) && $columns[7][0] !== '@'
                && self::absolute($columns[7], $cwd) === $wanted) {
                $inodes['socket:[' . $columns[6] . ']'] = true;
            }
        }
        if ($inodes === []) {
            return false;
        }
        foreach ($descriptors as $fd) {
            if ($fd !== '.' && $fd !== '..' && isset($inodes[(string) @\readlink("/proc/$pid/fd/$fd")])) {
                return true;
            }
        }
        return false;
    }

    /** $path made absolute against $base, its directory resolved (symlinks, ..). */
    private static function absolute(string $path, string $base): string
    {
        if ($path[0] !== '/') {
            $path = \rtrim($base, '/') . '/' . $path;
        }
        $dir = \realpath(\dirname($path));
        return ($dir === false ? \dirname($path) : $dir) . '/' . \basename($path);
    }

    /**
     * Writes our pid, replacing a stale file; refuses when a live master owns it, or when the path is
     * unsafe. Created with O_EXCL and mode 0600.
     *
     * @throws UnsafePath|AlreadyRunning
     */
    public function claim(int $pid): void
    {
        RuntimeFiles::checkDirectoryOf($this->path);
        $existing = $this->read();
        if ($existing !== null && $existing !== $pid && $this->whyNotMaster($existing) === null) {
            throw new AlreadyRunning("Weft is already running with master pid $existing (pid file {$this->path})");
        }
        if (RuntimeFiles::existingFile($this->path) !== null) {
            @\unlink($this->path);
        }
        $stream = RuntimeFiles::create($this->path, 0600);
        \fwrite($stream, $pid . "\n");
        \fclose($stream);
    }

    /** Removes the file if it still names $pid. */
    public function release(int $pid): void
    {
        try {
            if ($this->read() === $pid) {
                @\unlink($this->path);
            }
        } catch (UnsafePath) {
        }
    }

    /** A zombie (exited, not yet reaped) still answers kill(0): it counts as gone. */
    public static function alive(int $pid): bool
    {
        if ($pid <= 0 || !@\posix_kill($pid, 0)) {
            return \posix_get_last_error() === 1 /* EPERM: alive, but not ours to signal */ && \is_dir("/proc/$pid");
        }
        $stat = @\file_get_contents("/proc/$pid/stat");
        if ($stat === false) {
            return true;
        }
        return \substr($stat, (int) \strrpos($stat, ')') + 2, 1) !== 'Z';
    }

    /** When $pid started, as a Unix time, from /proc (null where there is no /proc). */
    public static function startedAt(int $pid): ?float
    {
        $stat = @\file_get_contents("/proc/$pid/stat");
        $system = @\file_get_contents('/proc/stat');
        if ($stat === false || $system === false || !\preg_match('/^btime (\d+)$/m', $system, $m)) {
            return null;
        }
        $fields = \explode(' ', \substr($stat, (int) \strrpos($stat, ')') + 2));
        // Field 22 of stat, the start time in clock ticks after boot; Linux reports 100 ticks a second.
        return isset($fields[19]) ? (int) $m[1] + (int) $fields[19] / 100 : null;
    }
}
