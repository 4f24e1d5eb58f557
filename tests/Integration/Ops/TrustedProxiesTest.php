<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\Curl;
use Weft\Tests\Support\RawHttp;
use Weft\Tests\Support\Nginx;
use Weft\Tests\Support\ServerProcess;

/**
 * --trusted-proxies behind a real nginx: the client nginx names reaches the access log, the handler's
 * Request and, through the bridges, Symfony's and Laravel's own request objects. Everything runs on
 * loopback, so nginx stands for a proxy whose client is remote by appending a fixed address
 * (203.0.113.7, TEST-NET-3) to X-Forwarded-For as $proxy_add_x_forwarded_for would append it.
 */
final class TrustedProxiesTest extends TestCase
{
    private const APP = __DIR__ . '/fixtures/client-app.php';
    private const CLIENT = '203.0.113.7';

    /** @var resource|null */
    private $nginx = null;
    private string $dir;
    /** @var list<ServerProcess> */
    private array $servers = [];

    protected function setUp(): void
    {
        $this->dir = \sys_get_temp_dir() . '/weft-proxies-' . \bin2hex(\random_bytes(4));
        \mkdir($this->dir . '/logs', 0777, true);
    }

    protected function tearDown(): void
    {
        foreach ($this->servers as $server) {
            $server->stop();
        }
        if (\is_resource($this->nginx)) {
            \posix_kill(\proc_get_status($this->nginx)['pid'], \SIGQUIT);
            ServerProcess::waitFor(fn () => !\proc_get_status($this->nginx)['running'], 10, 'nginx to exit');
            \proc_close($this->nginx);
        }
        \exec('rm -rf ' . \escapeshellarg($this->dir));
    }

    public function testTheClientNginxNamesIsTheAccessLogsAndTheRequestsAddress(): void
    {
        $log = "$this->dir/access.log";
        $weft = $this->serve([self::APP, '--trusted-proxies', '127.0.0.1/32', '--access-log', $log]);
        $port = $this->startNginx(['/' => $weft]);

        // The client's own X-Forwarded-For (a spoofing attempt) is left of the address nginx appends: never read.
        foreach ([[], ['X-Forwarded-For' => '10.6.6.6']] as $headers) {
            $reply = Curl::get("http://127.0.0.1:$port/who", $headers);
            self::assertSame(200, $reply['status'], $reply['body']);
            $seen = \json_decode($reply['body'], true, 512, \JSON_THROW_ON_ERROR);
            self::assertSame(self::CLIENT, $seen['remote']);
            self::assertSame('127.0.0.1', $seen['peer'], 'nginx, the connection\'s other end');
            self::assertSame('https', $seen['scheme'], 'X-Forwarded-Proto from the trusted proxy');
        }
        self::assertStringStartsWith('10.6.6.6, ', $seen['forwarded_for'], 'the field itself reaches the application as sent');

        $lines = ServerProcess::waitFor(static function () use ($log) {
            $lines = @\file($log, \FILE_IGNORE_NEW_LINES);
            return \is_array($lines) && \count($lines) >= 2 ? $lines : null;
        }, 10, 'two access log lines');
        foreach ($lines as $line) {
            self::assertStringStartsWith(self::CLIENT . ' - - [', $line);
            self::assertStringContainsString('"GET /who HTTP/1.', $line);
        }
    }

    public function testAnUntrustedPeerIsItsOwnClientWhateverItClaims(): void
    {
        $log = "$this->dir/access.log";
        // Trusted: a range the test's loopback connections are not in.
        $weft = $this->serve([self::APP, '--trusted-proxies', '10.0.0.0/8,fd00::/8', '--access-log', $log, '--access-log-format', 'json']);
        $reply = Curl::get("http://127.0.0.1:$weft/who", ['X-Forwarded-For' => self::CLIENT, 'X-Forwarded-Proto' => 'https']);
        $seen = \json_decode($reply['body'], true, 512, \JSON_THROW_ON_ERROR);
        self::assertSame(['127.0.0.1', '127.0.0.1', 'http'], [$seen['remote'], $seen['peer'], $seen['scheme']]);
        $line = ServerProcess::waitFor(static fn () => @\file($log)[0] ?? null, 10, 'the access log line');
        self::assertSame('127.0.0.1', \json_decode($line, true, 512, \JSON_THROW_ON_ERROR)['remote']);
    }

    public function testEachRequestOfAKeptAliveConnectionIsResolvedOnItsOwn(): void
    {
        // What a proxy's keep-alive upstream connection carries: requests of different clients, and
        // one that names none. The trust in the peer is per connection; the client is per request.
        $weft = $this->serve([self::APP, '--trusted-proxies', '127.0.0.1']);
        $connection = new RawHttp("127.0.0.1:$weft");
        $connection->send("GET /a HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.7\r\nX-Forwarded-Proto: https\r\n\r\n"
            . "GET /b HTTP/1.1\r\nHost: x\r\n\r\n"
            . "GET /c HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 2001:db8::9\r\nConnection: close\r\n\r\n");
        $seen = [];
        for ($i = 0; $i < 3; $i++) {
            $body = \json_decode($connection->response()['body'], true, 512, \JSON_THROW_ON_ERROR);
            $seen[] = [$body['remote'], $body['scheme']];
        }
        $connection->close();
        self::assertSame([['203.0.113.7', 'https'], ['127.0.0.1', 'http'], ['2001:db8::9', 'http']], $seen);
    }

    public function testMalformedForwardingFromATrustedPeerLeavesThePeer(): void
    {
        $weft = $this->serve([self::APP, '--trusted-proxies', 'loopback', '--proxy-header', 'forwarded']);
        $get = static fn (array $headers): array => \json_decode(Curl::get("http://127.0.0.1:$weft/who", $headers)['body'], true, 512, \JSON_THROW_ON_ERROR);
        self::assertSame(['2001:db8::7', 'https'], \array_values(\array_intersect_key($get(['Forwarded' => 'for="[2001:db8::7]:4711";proto=https']), ['remote' => 1, 'scheme' => 1])));
        // --proxy-header forwarded: X-Forwarded-For is not read at all.
        self::assertSame('127.0.0.1', $get(['X-Forwarded-For' => self::CLIENT])['remote']);
        foreach (['for="203.0.113.7', 'for=2001:db8::7', 'for=203.0.113.7;for=203.0.113.8', \str_repeat('for=127.0.0.1,', 40)] as $bad) {
            self::assertSame(['127.0.0.1', 'http'], \array_values(\array_intersect_key($get(['Forwarded' => $bad]), ['remote' => 1, 'scheme' => 1])), $bad);
        }
    }

    public function testSymfonyAndLaravelSeeTheClientThroughTheBridge(): void
    {
        $root = \dirname(__DIR__, 3);
        \exec('bash ' . \escapeshellarg("$root/scripts/fixtures.sh") . ' symfony-app laravel-app 2>&1', $output, $status);
        self::assertSame(0, $status, "scripts/fixtures.sh failed:\n" . \implode("\n", $output));
        $env = ['WEFT_LEAK_WARNINGS' => '', 'APP_ENV' => 'production', 'APP_DEBUG' => 'false'];
        $backends = [];
        foreach (['symfony-app', 'laravel-app'] as $app) {
            $backends["/$app/"] = $this->serve(["$root/var/fixtures/$app/weft.php", '--trusted-proxies', '127.0.0.1', '--access-log', "$this->dir/$app.log"], $env);
        }
        $port = $this->startNginx($backends);
        foreach (\array_keys($backends) as $prefix) {
            $reply = Curl::get("http://127.0.0.1:$port{$prefix}headers", ['X-Forwarded-For' => '10.6.6.6']);
            self::assertSame(200, $reply['status'], $reply['body']);
            $seen = \json_decode($reply['body'], true, 512, \JSON_THROW_ON_ERROR);
            self::assertSame(self::CLIENT, $seen['client_ip'], "$prefix: the framework's getClientIp() / ip()");
            self::assertTrue($seen['secure'], "$prefix: isSecure() from X-Forwarded-Proto, with no trusted-proxy setting in the application");
            // Weft used the fields: an application trusting every peer cannot read the forged 10.6.6.6 from them.
            self::assertNull($seen['forwarded_for'], "$prefix: X-Forwarded-For is not passed on once used");
        }
    }

    public function testBadOptionsAreRefusedWithAReason(): void
    {
        foreach ([
            [['--trusted-proxies', 'proxy.example.com'], "'proxy.example.com' is not an IP address"],
            [['--trusted-proxies', '10.0.0.0/33'], 'prefix length must be 0 to 32'],
            [['--trusted-proxies', '::/129'], 'prefix length must be 0 to 128'],
            [['--trusted-proxies', '127.0.0.1', '--proxy-header', 'x-real-ip'], 'expects one of x-forwarded-for, forwarded'],
            [['--trusted-proxies', '127.0.0.1', '--mode', 'fpm'], 'not available in fpm mode'],
            [['--trusted-proxies', '127.0.0.1', '--protocol', 'line'], 'needs --protocol http'],
        ] as [$args, $reason]) {
            $pidFile = "$this->dir/options.pid";
            [$code, $out] = ServerProcess::cli(['serve', self::APP, '--port', '0', '--pid-file', $pidFile, ...$args]);
            self::assertSame(2, $code, $out);
            self::assertStringContainsString($reason, $out);
        }
    }

    /** @param list<string> $args @param array<string, string> $env @return int the port */
    private function serve(array $args, array $env = []): int
    {
        $server = new ServerProcess([...$args, '--workers', '1'], $env);
        $this->servers[] = $server;
        return $server->port;
    }

    /** @param array<string, int> $backends location prefix => Weft's port @return int nginx's port */
    private function startNginx(array $backends): int
    {
        self::assertTrue(\is_executable(Nginx::BINARY), Nginx::BINARY . ' is missing: run scripts/setup.sh');
        $port = self::freePort();
        $locations = '';
        foreach ($backends as $prefix => $backend) {
            $locations .= <<<LOC
                    location $prefix {
                        proxy_pass http://127.0.0.1:$backend/;
                        proxy_http_version 1.1;
                        proxy_set_header Connection "";
                        proxy_set_header Host \$host;
                        # A remote client, as \$proxy_add_x_forwarded_for would append it.
                        proxy_set_header X-Forwarded-For "\$http_x_forwarded_for, 203.0.113.7";
                        proxy_set_header X-Forwarded-Proto https;
                    }

                LOC;
        }
        Nginx::writeConfig($this->dir, <<<HTTP
                server {
                    listen 127.0.0.1:$port;
                    location = /nginx-ready { return 200 "ok\\n"; }
            $locations
                }
            HTTP, 64);
        $this->nginx = Nginx::start($this->dir);
        ServerProcess::waitFor(function () use ($port) {
            if (!\proc_get_status($this->nginx)['running']) {
                self::fail('nginx exited: ' . @\file_get_contents("$this->dir/logs/error.log") . @\file_get_contents("$this->dir/logs/stderr.log"));
            }
            return @\file_get_contents("http://127.0.0.1:$port/nginx-ready") === "ok\n";
        }, 10, 'nginx to answer');
        return $port;
    }

    private static function freePort(): int
    {
        $socket = \stream_socket_server('tcp://127.0.0.1:0');
        $name = (string) \stream_socket_get_name($socket, false);
        \fclose($socket);
        return (int) \substr($name, (int) \strrpos($name, ':') + 1);
    }
}
