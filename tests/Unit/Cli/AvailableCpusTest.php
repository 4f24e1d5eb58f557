<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Cli;

use PHPUnit\Framework\TestCase;
use Weft\Cli\Config\AvailableCpus;

/** The default worker count from affinity and cgroup quotas, against /proc and cgroup trees laid out on disk. */
final class AvailableCpusTest extends TestCase
{
    private string $root;

    protected function setUp(): void
    {
        $this->root = \sys_get_temp_dir() . '/weft-cpus-' . \bin2hex(\random_bytes(4));
    }

    protected function tearDown(): void
    {
        \exec('rm -rf ' . \escapeshellarg($this->root));
    }

    public function testAffinityListsAreCounted(): void
    {
        self::assertSame(4, AvailableCpus::countList('0-3'));
        self::assertSame(7, AvailableCpus::countList('0-3,8,10-11'));
        self::assertSame(1, AvailableCpus::countList('5'));
        self::assertNull(AvailableCpus::countList('garbage'));
    }

    public function testCgroupV2QuotaOnAnAncestorCapsTheAffinity(): void
    {
        $this->write('proc/self/status', "Name:\tphp\nCpus_allowed_list:\t0-7\n");
        $this->write('proc/self/cgroup', "0::/system.slice/weft.service\n");
        $this->write('cg/system.slice/weft.service/cpu.max', "max 100000\n");
        $this->write('cg/system.slice/cpu.max', "250000 100000\n");
        $cpus = new AvailableCpus("$this->root/proc", "$this->root/cg");
        self::assertSame(8, $cpus->affinity());
        self::assertEqualsWithDelta(2.5, $cpus->quota(), 1e-9);
        self::assertSame(3, $cpus->detect(), 'a 2.5-CPU quota rounds up to 3 workers');
    }

    public function testNoQuotaLeavesTheAffinity(): void
    {
        $this->write('proc/self/status', "Cpus_allowed_list:\t0,2\n");
        $this->write('proc/self/cgroup', "0::/\n");
        $this->write('cg/cpu.max', "max 100000\n");
        self::assertSame(2, (new AvailableCpus("$this->root/proc", "$this->root/cg"))->detect());
    }

    public function testCgroupV1Quota(): void
    {
        $this->write('proc/self/status', "Cpus_allowed_list:\t0-15\n");
        $this->write('proc/self/cgroup', "4:memory:/x\n3:cpu,cpuacct:/docker/abc\n0::/\n");
        $this->write('cg/cpu,cpuacct/docker/abc/cpu.cfs_quota_us', "150000\n");
        $this->write('cg/cpu,cpuacct/docker/abc/cpu.cfs_period_us', "100000\n");
        $this->write('cg/cpu,cpuacct/cpu.cfs_quota_us', "-1\n");
        $this->write('cg/cpu,cpuacct/cpu.cfs_period_us', "100000\n");
        self::assertSame(2, (new AvailableCpus("$this->root/proc", "$this->root/cg"))->detect());
    }

    /**
     * Kubernetes: a limit of 1500m becomes "150000 100000" in the container's own cgroup, which a cgroup
     * namespace shows as "/" (containerd on cgroup v2).
     */
    public function testKubernetesCpuLimitOnCgroupV2(): void
    {
        $this->write('proc/self/status', "Cpus_allowed_list:\t0-15\n");
        $this->write('proc/self/cgroup', "0::/\n");
        $this->write('cg/cpu.max', "150000 100000\n");
        self::assertSame(2, (new AvailableCpus("$this->root/proc", "$this->root/cg"))->detect());
        $this->write('cg/cpu.max', "50000 100000\n");
        self::assertSame(1, (new AvailableCpus("$this->root/proc", "$this->root/cg"))->detect(), '500m: one worker, never zero');
    }

    /**
     * Kubernetes on cgroup v1 (no cgroup namespace): /proc/self/cgroup names the host's path
     * (/kubepods/burstable/pod.../CONTAINER), but the container's mount of the hierarchy is its own cgroup,
     * where that path does not exist: the quota is found at the mount's root.
     */
    public function testKubernetesCpuLimitOnCgroupV1WhoseHostPathIsNotMounted(): void
    {
        $this->write('proc/self/status', "Cpus_allowed_list:\t0-15\n");
        $this->write('proc/self/cgroup', "12:memory:/kubepods/burstable/pod1234/abcd\n3:cpu,cpuacct:/kubepods/burstable/pod1234/abcd\n");
        $this->write('cg/cpu,cpuacct/cpu.cfs_quota_us', "200000\n");
        $this->write('cg/cpu,cpuacct/cpu.cfs_period_us', "100000\n");
        self::assertSame(2, (new AvailableCpus("$this->root/proc", "$this->root/cg"))->detect());
    }

    public function testWithoutProcItFallsBackToOne(): void
    {
        self::assertSame(1, (new AvailableCpus("$this->root/none", "$this->root/none"))->detect());
    }

    private function write(string $path, string $content): void
    {
        @\mkdir(\dirname("$this->root/$path"), 0777, true);
        \file_put_contents("$this->root/$path", $content);
    }
}
