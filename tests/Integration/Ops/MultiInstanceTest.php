<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\TestCase;
use Weft\Client\Redis\Connection;
use Weft\Tests\Support\Nginx;
use Weft\Tests\Support\ServerProcess;

/**
 * Several hosts on one machine: three `bin/weft serve examples/websocket-hub-chat.php` instances, each
 * in a network namespace of its own that the test makes (a veth pair on 10.231.N.0/30: the instance on
 * .2 inside, the root namespace on .1), sharing rooms through Redis, behind nginx running the shipped
 * deploy/nginx/weft-lb.conf in the root namespace. The instances reach the shared test Redis through
 * tcp_forward.py, listening on the root side of each veth pair: nothing else leaves the namespaces.
 *
 * Where namespaces cannot be made (no CAP_SYS_ADMIN, no `ip`), the test says why on stderr and runs the
 * very same checks on three loopback ports. WEFT_TEST_NETNS=off forces loopback; =require makes a
 * failure to create the namespaces a failure of the test.
 */
final class MultiInstanceTest extends TestCase
{
    private const WRK = '/usr/bin/wrk';
    private const PYTHON = '/usr/bin/python3';
    private const EXAMPLE = __DIR__ . '/../../../examples/websocket-hub-chat.php';
    /** Namespaces are "weft-mi-<pid of the test>-<1..3>", veth ends "wmi<pid>h<n>" (root) / "wmi<pid>n<n>". */
    private const NS_PREFIX = 'weft-mi-';
    private const LINK_PREFIX = 'wmi';
    private const INNER_PORT = 8080;

    private string $ip = '';
    private string $mode = 'loopback';
    private string $dir;
    private string $hubPrefix;
    private string $redisUrl;
    /** @var list<string> namespaces made by this test */
    private array $namespaces = [];
    /** @var list<string> root-side veth ends made by this test */
    private array $links = [];
    /** @var list<int> third octet of each instance's 10.231.N.0/30 */
    private array $subnets = [];
    /** @var list<string> each instance's address as nginx and the clients reach it */
    private array $addresses = [];
    /** @var list<ServerProcess> */
    private array $instances = [];
    /** @var resource|null */
    private $forwarder = null;
    /** @var resource|null */
    private $nginx = null;
    private int $lbPort = 0;

    protected function setUp(): void
    {
        foreach ([Nginx::BINARY, self::WRK, self::PYTHON] as $binary) {
            self::assertTrue(\is_executable($binary), "$binary is missing: run scripts/setup.sh");
        }
        \exec(self::PYTHON . ' -c "import websockets" 2>&1', $output, $code);
        self::assertSame(0, $code, 'python3-websockets is missing: run scripts/setup.sh');
        $redis = \getenv('WEFT_TEST_REDIS_URL');
        self::assertNotFalse($redis, 'WEFT_TEST_REDIS_URL is not set (eval "$(bash scripts/services.sh env)")');
        $this->redisUrl = $redis;
        // Our own keys and channel on the shared Redis.
        $this->hubPrefix = 'weft-test-multi:' . \bin2hex(\random_bytes(6)) . ':';
        $this->dir = \sys_get_temp_dir() . '/weft-multi-' . \bin2hex(\random_bytes(4));
        \mkdir("$this->dir/logs", 0777, true);

        $this->removeLeftovers();
        $why = $this->makeNamespaces();
        if ($why !== null) {
            if (\getenv('WEFT_TEST_NETNS') === 'require') {
                self::fail("WEFT_TEST_NETNS=require, but the network namespaces could not be made: $why");
            }
            \fwrite(\STDERR, "\nMultiInstanceTest: no network namespaces ($why): running the same checks on three loopback ports\n");
        }
        for ($i = 0; $i < 3; $i++) {
            $this->instances[$i] = $this->startInstance($i);
        }
        $this->startNginx();
    }

    protected function tearDown(): void
    {
        foreach ($this->instances as $instance) {
            $instance->stop();
        }
        $this->instances = [];
        if (\is_resource($this->nginx)) {
            \posix_kill(\proc_get_status($this->nginx)['pid'], \SIGQUIT);
            ServerProcess::waitFor(fn () => !\proc_get_status($this->nginx)['running'], 10, 'nginx to exit');
            \proc_close($this->nginx);
        }
        if (\is_resource($this->forwarder)) {
            \proc_terminate($this->forwarder);
            \proc_close($this->forwarder);
        }
        $this->removeNetwork($this->namespaces, $this->links);
        if (isset($this->hubPrefix)) {
            $redis = Connection::connect($this->redisUrl);
            $keys = $redis->keys($this->hubPrefix . '*');
            if (\is_array($keys) && $keys !== []) {
                $redis->del(...$keys);
            }
            $redis->close();
        }
        if (isset($this->dir)) {
            \exec('rm -rf ' . \escapeshellarg($this->dir));
        }
    }

    public function testAClientOnInstanceOneGetsWhatAClientOnInstanceThreePublished(): void
    {
        $seen = $this->clients('cross');
        self::assertSame('d3: from 3 direct', $seen['direct_1_got']);
        self::assertSame('d3: from 3 direct', $seen['direct_2_got']);
        self::assertSame('d1: from 1 direct', $seen['direct_3_got']);
        self::assertSame([0, 2], $seen['nginx_landed'], 'nginx put the two clients on instances 1 and 3');
        self::assertSame('n3: from 3 via nginx', $seen['nginx_1_got']);
        self::assertSame('n3: from 3 via nginx', $seen['direct_1_got_nginx_3']);
        self::assertSame('n1: from 1 via nginx', $seen['nginx_3_got']);
        self::assertSame([2, 2, 2, 2, 2], $seen['copies'], 'each client gets each message once');
    }

    public function testKillingOneInstanceLosesOnlyItsOwnConnectionsWhichReconnectThroughNginx(): void
    {
        $victim = 1;
        $master = $this->instances[$victim]->masterPid();
        $workers = $this->instances[$victim]->workerPids();
        self::assertNotSame([], $workers);
        self::assertSame($master, \posix_getpgid($master), 'the instance leads its process group');
        foreach ($workers as $worker) {
            self::assertSame($master, \posix_getpgid($worker), 'its workers are in the group kill -9 hits');
        }

        // The client script kills the group (master and workers, SIGKILL) once its clients are connected.
        $seen = $this->clients('kill', ['victim' => $victim, 'victim_pgid' => $master]);

        ServerProcess::waitFor(fn () => !$this->instances[$victim]->isRunning(), 10, 'the killed master to be gone');
        foreach ($workers as $worker) {
            ServerProcess::waitFor(static fn () => self::gone($worker), 10, "the killed instance's worker $worker to be gone");
        }
        self::assertCount(2, $seen['dropped_codes']);
        foreach ($seen['dropped_codes'] as $code) {
            self::assertContains($code, [1006, 1011, 1001], 'the killed instance never said goodbye');
        }
        self::assertSame([0, 0, 2, 2], $seen['kept_instances']);
        self::assertSame([true, true, true, true], $seen['kept_open'], "the other instances' clients stay connected");
        self::assertSame(\array_fill(0, 4, 'c10: after kill'), $seen['kept_got'], 'and go on receiving');
        self::assertCount(2, $seen['reconnected_to']);
        foreach ($seen['reconnected_to'] as $instance) {
            self::assertNotSame($victim, $instance, 'nginx sends a reconnecting client to a live instance');
        }
        self::assertSame(\array_fill(0, 6, 'c30: after reconnect'), $seen['all_got']);

        // Plain requests through nginx go on; the instance, started again, takes its share.
        for ($n = 0; $n < 6; $n++) {
            self::assertNotSame($this->addresses[$victim], $this->get()['upstream']);
        }
        $this->instances[$victim] = $this->startInstance($victim);
        ServerProcess::waitFor(fn () => $this->get()['upstream'] === $this->addresses[$victim], 10, 'nginx to use the restarted instance');
    }

    public function testARollingRestartOfAllThreeUnderLoadFailsNoRequest(): void
    {
        $wrk = \proc_open([self::WRK, '-t1', '-c8', '-d60s', '--timeout', '10s', "http://127.0.0.1:$this->lbPort/"], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes);
        try {
            // First each instance replaces its workers (bin/weft reload), then each is stopped and
            // started again as a new process, one after the other, while wrk goes on through nginx.
            foreach ($this->instances as $i => $instance) {
                [$code, $out] = $instance->control('reload');
                self::assertSame(0, $code, "reload of instance $i: $out");
            }
            foreach (\array_keys($this->instances) as $i) {
                $this->instances[$i]->stop();
                self::assertStringContainsString('Weft stopped', $this->instances[$i]->output());
                self::assertNotSame($this->addresses[$i], $this->get()['upstream'], 'the others serve meanwhile');
                $this->instances[$i] = $this->startInstance($i);
            }
            self::assertTrue(\proc_get_status($wrk)['running'], 'the load lasted through every restart');
        } finally {
            \proc_terminate($wrk, \SIGINT);   // wrk prints its summary on SIGINT
            $report = (string) \stream_get_contents($pipes[1]);
            \proc_close($wrk);
        }
        if (\getenv('WEFT_TEST_VERBOSE')) {
            \fwrite(\STDERR, "\n[$this->mode] $report");
        }
        self::assertSame(1, \preg_match('/(\d+) requests in/', $report, $m), $report);
        self::assertGreaterThan(100, (int) $m[1], $report);
        self::assertStringNotContainsString('Socket errors', $report, $report);
        self::assertStringNotContainsString('Non-2xx or 3xx responses', $report, $report);
        $served = [];
        ServerProcess::waitFor(function () use (&$served): bool {
            $served[$this->get()['upstream']] = true;
            return \count($served) === 3;
        }, 10, 'nginx to use all three restarted instances');
    }

    /** Namespaces, veth pairs and the Redis forwarder; null when made, else why not (all undone then). */
    private function makeNamespaces(): ?string
    {
        if (\getenv('WEFT_TEST_NETNS') === 'off') {
            return 'WEFT_TEST_NETNS=off';
        }
        if ($this->ip === '') {
            return 'no `ip` command (Debian: iproute2)';
        }
        // Two runs at once (two checkouts) must not pick the same subnets: an address on two veths
        // would route one run's traffic to the other's instances. The lock is held until the
        // addresses are on the interfaces, where the next run sees them.
        $lock = \fopen(\sys_get_temp_dir() . '/weft-multi-instance.lock', 'c');
        \flock($lock, \LOCK_EX);
        try {
            return $this->makeNamespacesLocked();
        } finally {
            \flock($lock, \LOCK_UN);
            \fclose($lock);
        }
    }

    private function makeNamespacesLocked(): ?string
    {
        $taken = [];
        [, $out] = self::command([$this->ip, '-4', '-o', 'addr', 'show']);
        \preg_match_all('/\b10\.231\.(\d+)\./', $out, $m);
        foreach ($m[1] as $octet) {
            $taken[(int) $octet] = true;
        }
        $free = \array_values(\array_diff(\range(1, 250), \array_keys($taken)));
        if (\count($free) < 3) {
            return 'no three free subnets in 10.231.0.0/16';
        }
        $pid = \getmypid();
        for ($i = 0; $i < 3; $i++) {
            $n = $i + 1;
            $ns = self::NS_PREFIX . "$pid-$n";
            $host = self::LINK_PREFIX . "{$pid}h$n";
            $peer = self::LINK_PREFIX . "{$pid}n$n";
            $net = "10.231.{$free[$i]}";
            $steps = [
                ['netns', 'add', $ns],
                ['link', 'add', $host, 'type', 'veth', 'peer', 'name', $peer],
                ['link', 'set', $peer, 'netns', $ns],
                ['addr', 'add', "$net.1/30", 'dev', $host],
                ['link', 'set', $host, 'up'],
                ['-n', $ns, 'addr', 'add', "$net.2/30", 'dev', $peer],
                ['-n', $ns, 'link', 'set', $peer, 'up'],
                ['-n', $ns, 'link', 'set', 'lo', 'up'],
            ];
            foreach ($steps as $step) {
                [$code, $out] = self::command([$this->ip, ...$step]);
                if ($step[0] === 'netns' && $code === 0) {
                    $this->namespaces[] = $ns;
                }
                if ($step[0] === 'link' && $step[1] === 'add' && $code === 0) {
                    $this->links[] = $host;
                }
                if ($code !== 0) {
                    $this->removeNetwork($this->namespaces, $this->links);
                    $this->namespaces = $this->links = [];
                    return '`ip ' . \implode(' ', $step) . '` failed: ' . \trim($out);
                }
            }
            $this->subnets[$i] = $free[$i];
            $this->addresses[$i] = "$net.2:" . self::INNER_PORT;
        }

        // Redis, on the root namespace's loopback, through the root side of each veth pair.
        $redisPort = (int) (\parse_url($this->redisUrl, \PHP_URL_PORT) ?? 6379);
        $listen = \array_map(static fn (int $octet): string => "10.231.$octet.1:$redisPort", $this->subnets);
        $this->forwarder = \proc_open([self::PYTHON, __DIR__ . '/fixtures/tcp_forward.py', "127.0.0.1:$redisPort", ...$listen], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['file', "$this->dir/logs/forward.log", 'w']], $pipes);
        $line = \fgets($pipes[1]);
        self::assertSame("READY\n", $line, 'tcp_forward.py: ' . \file_get_contents("$this->dir/logs/forward.log"));
        $this->mode = 'netns';
        return null;
    }

    private function startInstance(int $i): ServerProcess
    {
        $env = ['WEFT_HUB_PREFIX' => $this->hubPrefix, 'WEFT_HUB_REDIS' => $this->redisUrl];
        $args = [self::EXAMPLE, '--workers', '1', '--grace', '5'];
        $wrapper = [];
        if ($this->mode === 'netns') {
            $redisPort = (int) (\parse_url($this->redisUrl, \PHP_URL_PORT) ?? 6379);
            $env['WEFT_HUB_REDIS'] = "redis://10.231.{$this->subnets[$i]}.1:$redisPort";
            \array_push($args, '--host', "10.231.{$this->subnets[$i]}.2", '--port', (string) self::INNER_PORT);
            $wrapper = [$this->ip, 'netns', 'exec', $this->namespaces[$i]];
        } elseif (isset($this->addresses[$i])) {
            // Started again on the port nginx knows it by.
            \array_push($args, '--port', \substr($this->addresses[$i], (int) \strrpos($this->addresses[$i], ':') + 1));
        }
        $phpOptions = \extension_loaded('weft') ? ['-d', 'extension=' . \dirname(__DIR__, 3) . '/ext/modules/weft.so'] : [];
        $server = new ServerProcess($args, $env, 20.0, $phpOptions, null, $wrapper);
        if ($this->mode === 'netns') {
            [, $ns] = self::command([$this->ip, 'netns', 'identify', (string) $server->masterPid()]);
            self::assertSame($this->namespaces[$i], \trim($ns), "instance $i runs in its own namespace");
        }
        $this->addresses[$i] ??= $server->address();
        return $server;
    }

    private function startNginx(): void
    {
        $this->lbPort = self::freePort();
        // The shipped file with the test's addresses: what is tested is what users copy.
        $site = (string) \file_get_contents(\dirname(__DIR__, 3) . '/deploy/nginx/weft-lb.conf');
        $site = \str_replace("listen 80;\n", "listen 127.0.0.1:$this->lbPort;\n", $site, $listens);
        self::assertSame(1, $listens);
        foreach ([8081, 8082, 8083] as $i => $example) {
            $site = \str_replace("server 127.0.0.1:$example ", "server {$this->addresses[$i]} ", $site, $count);
            self::assertSame(1, $count);
        }
        \file_put_contents("$this->dir/site.conf", $site);
        // X-Weft-Upstream (the test's, not the shipped file's): which instance answered, 101s included.
        Nginx::writeConfig($this->dir, "    add_header X-Weft-Upstream \$upstream_addr always;\n    include $this->dir/site.conf;");
        $this->nginx = Nginx::start($this->dir);
        ServerProcess::waitFor(function (): bool {
            $body = @\file_get_contents("http://127.0.0.1:$this->lbPort/", false, \stream_context_create(['http' => ['timeout' => 2]]));
            return \is_string($body) && \str_starts_with($body, 'Connect with a WebSocket client');
        }, 10, 'nginx to proxy to the instances');
    }

    /** One GET / through nginx, which must succeed. @return array{upstream: string} */
    private function get(): array
    {
        $http_response_header = [];
        $body = @\file_get_contents("http://127.0.0.1:$this->lbPort/", false, \stream_context_create(['http' => ['timeout' => 10, 'ignore_errors' => true]]));
        self::assertStringContainsString(' 200 ', $http_response_header[0] ?? '', 'served through nginx: ' . \var_export($body, true));
        $upstream = '';
        foreach ($http_response_header as $line) {
            if (\preg_match('/^X-Weft-Upstream:\s*(.+)$/i', $line, $m)) {
                $parts = \explode(',', $m[1]);
                $upstream = \trim((string) \end($parts));
            }
        }
        return ['upstream' => $upstream];
    }

    /** @return array<string, mixed> what multi_instance_client.py's clients saw */
    private function clients(string $scenario, array $extra = []): array
    {
        $config = \json_encode(['lb' => "127.0.0.1:$this->lbPort", 'instances' => $this->addresses] + $extra, \JSON_THROW_ON_ERROR);
        $process = \proc_open([self::PYTHON, __DIR__ . '/fixtures/multi_instance_client.py', $scenario, $config], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = (string) \stream_get_contents($pipes[1]);
        $err = (string) \stream_get_contents($pipes[2]);
        $code = \proc_close($process);
        $logs = \implode("\n---\n", \array_map(static fn (ServerProcess $s): string => $s->output(), $this->instances));
        self::assertSame(0, $code, "multi_instance_client.py $scenario ($this->mode) failed:\n$out\n$err\ninstances:\n$logs\nnginx:\n" . @\file_get_contents("$this->dir/logs/error.log"));
        return \json_decode($out, true, 512, \JSON_THROW_ON_ERROR);
    }

    /** Namespaces and veth ends of earlier runs whose test process is gone (a kill -9 of phpunit). */
    private function removeLeftovers(): void
    {
        foreach (['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip'] as $candidate) {
            if (\is_executable($candidate)) {
                $this->ip = $candidate;
                break;
            }
        }
        if ($this->ip === '') {
            return;
        }
        $dead = static fn (string $pid): bool => !\file_exists("/proc/$pid");
        [, $out] = self::command([$this->ip, 'netns', 'list']);
        \preg_match_all('/^(' . \preg_quote(self::NS_PREFIX, '/') . '(\d+)-\d)\b/m', $out, $m, \PREG_SET_ORDER);
        $namespaces = \array_column(\array_filter($m, static fn (array $match): bool => $dead($match[2])), 1);
        [, $out] = self::command([$this->ip, '-o', 'link', 'show']);
        \preg_match_all('/^\d+: (' . self::LINK_PREFIX . '(\d+)h\d)[@:]/m', $out, $m, \PREG_SET_ORDER);
        $links = \array_column(\array_filter($m, static fn (array $match): bool => $dead($match[2])), 1);
        $this->removeNetwork($namespaces, $links);
    }

    /** @param list<string> $namespaces @param list<string> $links */
    private function removeNetwork(array $namespaces, array $links): void
    {
        // Deleting a namespace deletes the veth end in it, and with it the pair; a root end whose peer
        // never moved is deleted by name.
        foreach ($namespaces as $ns) {
            self::command([$this->ip, 'netns', 'delete', $ns]);
        }
        foreach ($links as $link) {
            [$code] = self::command([$this->ip, 'link', 'show', $link]);
            if ($code === 0) {
                self::command([$this->ip, 'link', 'delete', $link]);
            }
        }
    }

    /** @param list<string> $command @return array{int, string} exit code, stdout and stderr */
    private static function command(array $command): array
    {
        $process = \proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes);
        $out = (string) \stream_get_contents($pipes[1]);
        return [\proc_close($process), $out];
    }

    private static function gone(int $pid): bool
    {
        $stat = @\file_get_contents("/proc/$pid/stat");
        // A zombie waiting for its reaper runs no code and holds no socket.
        return $stat === false || \preg_match('/^\d+ \(.*\) Z /s', $stat) === 1;
    }

    private static function freePort(): int
    {
        $socket = \stream_socket_server('tcp://127.0.0.1:0');
        $name = (string) \stream_socket_get_name($socket, false);
        \fclose($socket);
        return (int) \substr($name, (int) \strrpos($name, ':') + 1);
    }
}
