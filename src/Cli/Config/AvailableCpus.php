<?php

declare(strict_types=1);

namespace Weft\Cli\Config;

/**
 * How many CPUs this process may really use: the default worker count. /proc/cpuinfo counts the
 * machine's CPUs, which is wrong in a container or under `taskset`, where a worker per host CPU means
 * more workers than the process can ever run at once (context switches, memory, no gain).
 *
 * The answer is the smaller of the scheduler affinity (`Cpus_allowed_list`, what `nproc` reports) and
 * the cgroup CPU quota rounded up (cgroup v2 `cpu.max`, or v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`),
 * looked up along the process's cgroup and its ancestors, since any of them may carry the limit.
 */
final class AvailableCpus
{
    public function __construct(private readonly string $proc = '/proc', private readonly string $cgroupRoot = '/sys/fs/cgroup')
    {
    }

    public static function count(): int
    {
        return (new self())->detect();
    }

    public function detect(): int
    {
        $count = $this->affinity() ?? $this->cpuinfo() ?? 1;
        $quota = $this->quota();
        if ($quota !== null) {
            $count = \min($count, (int) \ceil($quota));
        }
        return \max(1, $count);
    }

    /** CPUs in this process's affinity mask, or null when /proc does not say. */
    public function affinity(): ?int
    {
        $status = @\file_get_contents($this->proc . '/self/status');
        if ($status === false || !\preg_match('/^Cpus_allowed_list:\s*(\S+)/m', $status, $m)) {
            return null;
        }
        return self::countList($m[1]);
    }

    /** "0-3,8,10-11" => 7 */
    public static function countList(string $list): ?int
    {
        $count = 0;
        foreach (\explode(',', \trim($list)) as $range) {
            if (\preg_match('/^(\d+)-(\d+)$/', $range, $m)) {
                $count += \max(0, (int) $m[2] - (int) $m[1] + 1);
            } elseif (\ctype_digit($range)) {
                $count++;
            } else {
                return null;
            }
        }
        return $count > 0 ? $count : null;
    }

    /** The tightest CPU quota (in CPUs, fractional) along this process's cgroups, or null for none. */
    public function quota(): ?float
    {
        $cgroups = @\file_get_contents($this->proc . '/self/cgroup');
        if ($cgroups === false) {
            return null;
        }
        $tightest = null;
        foreach (\explode("\n", \trim($cgroups)) as $line) {
            $parts = \explode(':', $line, 3);
            if (\count($parts) !== 3) {
                continue;
            }
            [$id, $controllers, $path] = $parts;
            $v2 = $id === '0' && $controllers === '';
            if (!$v2 && !\in_array('cpu', \explode(',', $controllers), true)) {
                continue;
            }
            $base = $v2 ? $this->cgroupRoot : $this->cgroupV1Mount($controllers);
            if ($base === null) {
                continue;
            }
            // The limit may sit on any ancestor; inside a container the path is usually "/" itself.
            for ($dir = \rtrim($path, '/'); ; $dir = \dirname($dir)) {
                $cpus = $v2 ? self::cpuMax(@\file_get_contents("$base$dir/cpu.max") ?: null)
                    : self::cfs(@\file_get_contents("$base$dir/cpu.cfs_quota_us") ?: null, @\file_get_contents("$base$dir/cpu.cfs_period_us") ?: null);
                if ($cpus !== null) {
                    $tightest = $tightest === null ? $cpus : \min($tightest, $cpus);
                }
                if ($dir === '' || $dir === '/' || $dir === '.') {
                    break;
                }
            }
        }
        return $tightest;
    }

    /** cgroup v2 "cpu.max": "max 100000" (no limit) or "150000 100000" (1.5 CPUs). */
    public static function cpuMax(?string $content): ?float
    {
        if ($content === null || !\preg_match('/^(max|\d+)\s+(\d+)/', \trim($content), $m) || $m[1] === 'max' || (int) $m[2] === 0) {
            return null;
        }
        return (int) $m[1] / (int) $m[2];
    }

    /** cgroup v1: a quota of -1 means no limit. */
    public static function cfs(?string $quota, ?string $period): ?float
    {
        if ($quota === null || $period === null || (int) $quota <= 0 || (int) $period <= 0) {
            return null;
        }
        return (int) $quota / (int) $period;
    }

    private function cgroupV1Mount(string $controllers): ?string
    {
        foreach ([$controllers, 'cpu,cpuacct', 'cpu'] as $name) {
            if (\is_dir("{$this->cgroupRoot}/$name")) {
                return "{$this->cgroupRoot}/$name";
            }
        }
        return null;
    }

    private function cpuinfo(): ?int
    {
        $cpuinfo = @\file_get_contents($this->proc . '/cpuinfo');
        if ($cpuinfo === false) {
            return null;
        }
        $count = \preg_match_all('/^processor\s*:/m', $cpuinfo);
        return $count > 0 ? $count : null;
    }
}
