<?php

declare(strict_types=1);

namespace Weft\Bench;

/** A description of the machine the figures were measured on, for the report and results.json. */
final class Machine
{
    /** @param array<string, mixed> $details */
    public function __construct(
        public readonly string $cpuModel,
        public readonly int $cores,
        public readonly string $kernel,
        public readonly int $memTotal,
        public readonly int $clockTicks,
        public readonly int $pageSize,
        public readonly array $details = [],
    ) {
    }

    public static function detect(): self
    {
        $cpuinfo = (string) @\file_get_contents('/proc/cpuinfo');
        $model = \preg_match('/^model name\s*:\s*(.+)$/m', $cpuinfo, $m) ? \trim($m[1]) : \php_uname('m');
        $cores = \max(1, \preg_match_all('/^processor\s*:/m', $cpuinfo));
        $meminfo = (string) @\file_get_contents('/proc/meminfo');
        $total = \preg_match('/^MemTotal:\s+(\d+) kB/m', $meminfo, $m) ? (int) $m[1] * 1024 : 0;
        $ticks = (int) \trim((string) @\shell_exec('getconf CLK_TCK 2>/dev/null')) ?: 100;
        $page = (int) \trim((string) @\shell_exec('getconf PAGESIZE 2>/dev/null')) ?: 4096;
        return new self($model, $cores, \php_uname('s') . ' ' . \php_uname('r'), $total, $ticks, $page);
    }

    public static function memAvailable(): ?int
    {
        $meminfo = (string) @\file_get_contents('/proc/meminfo');
        return \preg_match('/^MemAvailable:\s+(\d+) kB/m', $meminfo, $m) ? (int) $m[1] * 1024 : null;
    }

    /** @param array<string, mixed> $details */
    public function with(array $details): self
    {
        return new self($this->cpuModel, $this->cores, $this->kernel, $this->memTotal, $this->clockTicks, $this->pageSize, $details + $this->details);
    }

    /**
     * The opcache and JIT state of a PHP started with the given flags, as the server processes are.
     *
     * @param list<string> $flags
     * @return array<string, mixed>
     */
    public static function probePhp(string $php, array $flags): array
    {
        $code = '$s = function_exists("opcache_get_status") ? opcache_get_status(false) : false;'
            . ' echo json_encode(["php" => PHP_VERSION, "sapi" => PHP_SAPI,'
            . ' "opcache" => is_array($s) && !empty($s["opcache_enabled"]),'
            . ' "jit" => is_array($s) && !empty($s["jit"]["on"]),'
            . ' "jit_kind" => ini_get("opcache.jit"), "jit_buffer" => ini_get("opcache.jit_buffer_size"),'
            . ' "extensions" => get_loaded_extensions()]);';
        $command = \escapeshellarg($php);
        foreach ($flags as $flag) {
            $command .= ' ' . \escapeshellarg($flag);
        }
        $json = \json_decode((string) @\shell_exec($command . ' -r ' . \escapeshellarg($code) . ' 2>/dev/null'), true);
        return \is_array($json) ? $json : ['error' => 'could not run ' . $php];
    }

    public static function wrkVersion(?string $wrk): ?string
    {
        if ($wrk === null) {
            return null;
        }
        $line = \strtok((string) @\shell_exec(\escapeshellarg($wrk) . ' -v 2>&1'), "\n");
        return $line === false ? null : \trim($line);
    }

    /** @return array<string, mixed> */
    public function toArray(): array
    {
        return [
            'cpu_model' => $this->cpuModel,
            'cores' => $this->cores,
            'kernel' => $this->kernel,
            'mem_total_bytes' => $this->memTotal,
            'clock_ticks' => $this->clockTicks,
            'page_size' => $this->pageSize,
        ] + $this->details;
    }
}
