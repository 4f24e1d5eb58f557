<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\Nginx;
use Weft\Tests\Support\ServerProcess;

/**
 * deploy/nginx/weft-lb.conf in front of three Weft instances running examples/session.php with their
 * sessions in Redis: each instance is stopped and started again in turn while wrk loads nginx, and
 * neither wrk nor a user with a session sees a failed request or a lost session.
 */
final class LoadBalancerTest extends TestCase
{
    private const WRK = '/usr/bin/wrk';

    /** @var resource|null */
    private $nginx = null;
    private ?string $dir = null;
    /** @var array<int, ServerProcess> */
    private array $instances = [];
    private string $cookie = '';

    protected function tearDown(): void
    {
        foreach ($this->instances as $instance) {
            $instance->stop();
        }
        if (\is_resource($this->nginx)) {
            $pid = \proc_get_status($this->nginx)['pid'];
            \posix_kill($pid, \SIGQUIT);
            ServerProcess::waitFor(fn () => !\proc_get_status($this->nginx)['running'], 10, 'nginx to exit');
            \proc_close($this->nginx);
        }
        if ($this->dir !== null) {
            \exec('rm -rf ' . \escapeshellarg($this->dir));
        }
    }

    public function testRollingRestartUnderLoadFailsNoRequestAndKeepsTheSession(): void
    {
        foreach ([Nginx::BINARY, self::WRK] as $binary) {
            self::assertTrue(\is_executable($binary), "$binary is missing: run scripts/setup.sh");
        }
        $redis = \getenv('WEFT_TEST_REDIS_URL') ?: 'redis://127.0.0.1:16379';
        $ports = [self::freePort(), self::freePort(), self::freePort()];
        foreach ($ports as $i => $port) {
            $this->instances[$port] = $this->startInstance($port, "i$i", $redis);
        }
        $lbPort = $this->startNginx($ports);

        // A user with a session, served by whichever instance nginx picks.
        $first = $this->visit($lbPort);
        self::assertSame(1, $first['visits']);
        self::assertNotSame('', $this->cookie);

        $wrk = \proc_open([self::WRK, '-t2', '-c16', '-d120s', '--timeout', '10s', "http://127.0.0.1:$lbPort/"], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes);
        $visits = 1;
        $servedBy = [$first['served_by'] => true];
        try {
            self::assertSame(++$visits, $this->visit($lbPort)['visits'], 'a visit under load');
            foreach ($ports as $i => $port) {
                $this->instances[$port]->stop();
                self::assertStringContainsString('Weft stopped', $this->instances[$port]->output(), "instance $i stops gracefully");
                // While it is down, the other two serve the user, and the session carries on.
                $during = $this->visit($lbPort);
                self::assertSame(++$visits, $during['visits']);
                self::assertNotSame("i$i", $during['served_by']);
                $this->instances[$port] = $this->startInstance($port, "i$i", $redis);
                for ($n = 0; $n < 3; $n++) {
                    $after = $this->visit($lbPort);
                    self::assertSame(++$visits, $after['visits'], 'the session survives the restart');
                    $servedBy[$after['served_by']] = true;
                }
            }
        } finally {
            \proc_terminate($wrk, \SIGINT);   // wrk prints its summary on SIGINT
            $report = (string) \stream_get_contents($pipes[1]);
            \proc_close($wrk);
        }
        if (\getenv("WEFT_TEST_VERBOSE")) { \fwrite(\STDERR, $report); }
        self::assertMatchesRegularExpression('/(\d+) requests in/', $report, $report);
        \preg_match('/(\d+) requests in/', $report, $m);
        self::assertGreaterThan(100, (int) $m[1], $report);
        self::assertStringNotContainsString('Socket errors', $report, $report);
        self::assertStringNotContainsString('Non-2xx or 3xx responses', $report, $report);
        self::assertGreaterThanOrEqual(2, \count($servedBy), 'nginx spreads the user over the instances');
    }

    private function startInstance(int $port, string $name, string $redis): ServerProcess
    {
        return new ServerProcess([\dirname(__DIR__, 3) . '/examples/session.php', '--port', (string) $port, '--workers', '1', '--grace', '5'], ['REDIS_URL' => $redis, 'INSTANCE' => $name]);
    }

    /** @param list<int> $ports @return int nginx's port */
    private function startNginx(array $ports): int
    {
        $this->dir = \sys_get_temp_dir() . '/weft-lb-' . \bin2hex(\random_bytes(4));
        \mkdir($this->dir . '/logs', 0777, true);
        $lbPort = self::freePort();
        // The shipped file, with the test's ports: what is tested is what users copy.
        $site = (string) \file_get_contents(\dirname(__DIR__, 3) . '/deploy/nginx/weft-lb.conf');
        $site = \str_replace('listen 80;', "listen 127.0.0.1:$lbPort;", $site, $listens);
        self::assertSame(1, $listens);
        foreach ([8081, 8082, 8083] as $i => $example) {
            $site = \str_replace("127.0.0.1:$example ", "127.0.0.1:{$ports[$i]} ", $site, $count);
            self::assertSame(1, $count);
        }
        \file_put_contents("$this->dir/site.conf", $site);
        Nginx::writeConfig($this->dir, "    include $this->dir/site.conf;");
        $this->nginx = Nginx::start($this->dir);
        ServerProcess::waitFor(static fn () => @\file_get_contents("http://127.0.0.1:$lbPort/health") === "ok\n", 10, 'nginx to proxy');
        return $lbPort;
    }

    /** One request of the user with the session cookie. @return array{visits: int, served_by: string, pid: int} */
    private function visit(int $lbPort): array
    {
        $headers = $this->cookie === '' ? '' : "Cookie: weft_session=$this->cookie\r\n";
        $body = \file_get_contents("http://127.0.0.1:$lbPort/", false, \stream_context_create(['http' => ['header' => $headers, 'timeout' => 10, 'ignore_errors' => true]]));
        self::assertStringContainsString(' 200 ', $http_response_header[0] ?? '', 'the user is served: ' . \var_export($body, true));
        foreach ($http_response_header as $line) {
            if (\preg_match('/^Set-Cookie: weft_session=([0-9a-f]{32})/i', $line, $m)) {
                $this->cookie = $m[1];
            }
        }
        return \json_decode((string) $body, true, 512, \JSON_THROW_ON_ERROR);
    }

    private static function freePort(): int
    {
        $socket = \stream_socket_server('tcp://127.0.0.1:0');
        $name = (string) \stream_socket_get_name($socket, false);
        \fclose($socket);
        return (int) \substr($name, (int) \strrpos($name, ':') + 1);
    }
}
