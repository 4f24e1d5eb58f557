<?php

declare(strict_types=1);

namespace Weft\Bench\Process;

/**
 * A local backing service (the database of the sql3 and framework rows) moved off the server's CPU
 * for the rows that use it, and put back afterwards.
 *
 * The server under test is pinned to one CPU and the load generator to another. A database left
 * unpinned also runs on the server's CPU, and there the scheduler shares the CPU per thread: one
 * coroutine worker gets a smaller share of it against the database's threads than eight sync workers
 * do, so the comparison between the modes would measure the scheduler, not the servers. On the load
 * generator's CPU the database serves every mode alike, as one on another machine would.
 *
 * Only a process of this user listening on a loopback address can be found and moved (its threads'
 * affinity, with taskset); anything else is left where it is, and note() says why.
 */
final class ServicePin
{
    /**
     * @param ?int $pid the process moved, null when nothing was
     */
    private function __construct(
        private readonly ?int $pid,
        private readonly string $previousMask,
        private readonly string $note,
        private readonly string $taskset,
    ) {
    }

    /**
     * Moves every thread of the process listening on $url's host and port to $cpu.
     *
     * @param string $name what the report calls it ("MariaDB")
     */
    public static function toCpu(string $name, string $url, string $cpu, ?string $taskset): self
    {
        $parts = \parse_url($url);
        $host = (string) ($parts['host'] ?? '');
        $port = (int) ($parts['port'] ?? 0);
        $where = "$host:$port";
        if ($taskset === null) {
            return new self(null, '', "$name ($where) is not pinned to a CPU (no taskset)", '');
        }
        if (!\in_array($host, ['127.0.0.1', 'localhost', '::1'], true) || $port <= 0) {
            return new self(null, '', "$name ($where) is not on this machine's loopback: not pinned", $taskset);
        }
        $pid = self::listener($port);
        if ($pid === null) {
            return new self(null, '', "$name ($where) is not pinned to a CPU: its process is not this user's, or could not be found", $taskset);
        }
        \exec(\escapeshellarg($taskset) . ' -p ' . $pid . ' 2>&1', $out, $status);
        if ($status !== 0 || !\preg_match('/mask:\s*([0-9a-f]+)\s*$/i', \implode("\n", $out), $m)) {
            return new self(null, '', "$name ($where, pid $pid) is not pinned to a CPU: taskset could not read its affinity", $taskset);
        }
        $previous = $m[1];
        \exec(\escapeshellarg($taskset) . ' -a -p -c ' . \escapeshellarg($cpu) . ' ' . $pid . ' 2>&1', $out2, $status);
        if ($status !== 0) {
            return new self(null, '', "$name ($where, pid $pid) is not pinned to a CPU: " . \trim(\implode(' ', \array_slice($out2, -1))), $taskset);
        }
        return new self($pid, $previous, "$name ($where, pid $pid) ran on CPU $cpu, the load generator's, for these rows, and was put back afterwards (affinity mask $previous)", $taskset);
    }

    /** What the report says about it. */
    public function note(): string
    {
        return $this->note;
    }

    /** Whether the service was moved. */
    public function pinned(): bool
    {
        return $this->pid !== null;
    }

    /** Puts the service's threads back on the CPUs it had. */
    public function restore(): void
    {
        if ($this->pid !== null && \is_dir("/proc/$this->pid")) {
            \exec(\escapeshellarg($this->taskset) . ' -a -p ' . \escapeshellarg($this->previousMask) . ' ' . $this->pid . ' > /dev/null 2>&1');
        }
    }

    /** The pid of this user's process that listens on TCP $port, from /proc (no other tool needed). */
    private static function listener(int $port): ?int
    {
        $inodes = [];
        foreach (['/proc/net/tcp', '/proc/net/tcp6'] as $table) {
            $lines = @\file($table, \FILE_IGNORE_NEW_LINES) ?: [];
            foreach (\array_slice($lines, 1) as $line) {
                $f = \preg_split('/\s+/', \trim($line)) ?: [];
                // local_address is HEXIP:HEXPORT; state 0A is LISTEN; the inode is the tenth field.
                if (\count($f) > 9 && $f[3] === '0A' && \hexdec((string) \substr($f[1], \strrpos($f[1], ':') + 1)) === $port) {
                    $inodes['socket:[' . $f[9] . ']'] = true;
                }
            }
        }
        if ($inodes === []) {
            return null;
        }
        foreach (\glob('/proc/[0-9]*/fd/*', \GLOB_NOSORT) ?: [] as $fd) {
            $target = @\readlink($fd);
            if ($target !== false && isset($inodes[$target])) {
                return (int) \explode('/', $fd)[2];
            }
        }
        return null;
    }
}
