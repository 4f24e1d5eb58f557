<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\Nginx;
use Weft\Tests\Support\ServerProcess;

/**
 * deploy/nginx/weft-lb.conf as a Debian user installs it: in conf.d/, beside the package's default
 * site, in front of a real `bin/weft serve examples/websocket-echo.php`, with Python's `websockets`
 * client going through nginx.
 */
final class NginxWebSocketTest extends TestCase
{
    private const PYTHON = '/usr/bin/python3';
    private const DEBIAN_DEFAULT_SITE = '/etc/nginx/sites-available/default';
    private const SITE_NAME = 'app.example.com';

    /** @var resource|null */
    private $nginx = null;
    private string $dir;
    private ?ServerProcess $weft = null;

    protected function setUp(): void
    {
        foreach ([Nginx::BINARY, self::PYTHON] as $binary) {
            if (!\is_executable($binary)) {
                self::markTestSkipped("$binary is not installed");
            }
        }
        \exec(self::PYTHON . ' -c "import websockets" 2>&1', $output, $code);
        if ($code !== 0) {
            self::markTestSkipped('python3-websockets is not installed');
        }
        $this->dir = \sys_get_temp_dir() . '/weft-nginx-ws-' . \bin2hex(\random_bytes(4));
        foreach (['logs', 'conf.d', 'sites-enabled', 'www'] as $sub) {
            \mkdir("$this->dir/$sub", 0777, true);
        }
    }

    protected function tearDown(): void
    {
        $this->weft?->stop();
        if (\is_resource($this->nginx)) {
            \posix_kill(\proc_get_status($this->nginx)['pid'], \SIGQUIT);
            ServerProcess::waitFor(fn () => !\proc_get_status($this->nginx)['running'], 10, 'nginx to exit');
            \proc_close($this->nginx);
        }
        if (isset($this->dir)) {
            \exec('rm -rf ' . \escapeshellarg($this->dir));
        }
    }

    public function testAWebSocketClientGetsItsEchoThroughNginxBesideDebiansDefaultSite(): void
    {
        $this->weft = new ServerProcess([\dirname(__DIR__, 3) . '/examples/websocket-echo.php', '--workers', '1']);
        $weftPort = (int) \substr($this->weft->address(), (int) \strrpos($this->weft->address(), ':') + 1);
        $port = self::freePort();
        $this->configure($port, $weftPort);

        // What `nginx -t` says on a Debian machine with the file in conf.d/: no conflict with the default site.
        \exec(\implode(' ', \array_map('escapeshellarg', $this->nginxCommand())) . ' -t 2>&1', $check, $code);
        $check = \implode("\n", $check);
        self::assertSame(0, $code, $check);
        self::assertStringNotContainsString('conflicting server name', $check);

        $this->nginx = \proc_open($this->nginxCommand(), [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', "$this->dir/logs/stderr.log", 'w']], $pipes);
        // A plain GET for the site reaches Weft, whose WebSocket-only endpoint answers 426.
        ServerProcess::waitFor(fn () => self::httpStatus($port, self::SITE_NAME) === 426, 10, 'nginx to proxy to Weft');
        self::assertSame(200, self::httpStatus($port, 'localhost'), "another name gets Debian's default site");

        $echo = $this->client($port, self::SITE_NAME);
        self::assertSame('héllo through nginx', $echo['text'] ?? null, \json_encode($echo) . "\n" . $this->weft->output());
        self::assertSame([0, 1, 254, 255], $echo['binary']);
        self::assertTrue($echo['ordered']);
        self::assertSame(1000, $echo['close_code']);

        // The default site does not speak WebSocket: the handshake is answered by it, not by Weft.
        self::assertSame(['handshake_status' => 200], $this->client($port, 'localhost'));

        // Plain requests still keep their connection to Weft open ("" from the map, not "close"):
        // after one, Weft holds one idle connection from nginx.
        self::assertSame(426, self::httpStatus($port, self::SITE_NAME));
        ServerProcess::waitFor(function (): bool {
            $open = 0;
            foreach ($this->weft->status()['workers'] as $worker) {
                $open += (int) ($worker['connections'] ?? 0);
            }
            return $open === 1;
        }, 10, 'one keep-alive connection from nginx to Weft');
    }

    /** The shipped file in conf.d/ and Debian's default site in sites-enabled/, as Debian's nginx.conf includes them. */
    private function configure(int $port, int $weftPort): void
    {
        $site = (string) \file_get_contents(\dirname(__DIR__, 3) . '/deploy/nginx/weft-lb.conf');
        $site = \str_replace("listen 80;\n", "listen 127.0.0.1:$port;\n", $site, $listens);
        self::assertSame(1, $listens);
        foreach ([8081, 8082, 8083] as $example) {
            $site = \str_replace("127.0.0.1:$example ", "127.0.0.1:$weftPort ", $site, $count);
            self::assertSame(1, $count);
        }
        self::assertStringContainsString("server_name " . self::SITE_NAME . ';', $site);
        \file_put_contents("$this->dir/conf.d/weft.conf", $site);

        $default = \is_readable(self::DEBIAN_DEFAULT_SITE) ? (string) \file_get_contents(self::DEBIAN_DEFAULT_SITE) : <<<'SITE'
            server {
                listen 80 default_server;
                listen [::]:80 default_server;
                root /var/www/html;
                index index.html index.htm index.nginx-debian.html;
                server_name _;
                location / {
                    try_files $uri $uri/ =404;
                }
            }
            SITE;
        $default = \preg_replace('/^\s*listen \[::\]:80 default_server;$/m', '', $default);
        $default = \str_replace('listen 80 default_server;', "listen 127.0.0.1:$port default_server;", $default, $count);
        self::assertSame(1, $count);
        $default = \str_replace('root /var/www/html;', "root $this->dir/www;", $default);
        \file_put_contents("$this->dir/www/index.html", "Welcome to nginx!\n");
        \file_put_contents("$this->dir/sites-enabled/default", $default);

        Nginx::writeConfig($this->dir, "    include $this->dir/conf.d/*.conf;\n    include $this->dir/sites-enabled/*;");
    }

    /** @return list<string> */
    private function nginxCommand(): array
    {
        return Nginx::command($this->dir);
    }

    /** @return array<string, mixed> what the Python client saw */
    private function client(int $port, string $hostname): array
    {
        $process = \proc_open([self::PYTHON, __DIR__ . '/fixtures/ws_through_nginx.py', (string) $port, $hostname], [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $out = (string) \stream_get_contents($pipes[1]);
        $err = (string) \stream_get_contents($pipes[2]);
        $code = \proc_close($process);
        self::assertSame(0, $code, $out . $err);
        return \json_decode($out, true, 512, \JSON_THROW_ON_ERROR);
    }

    private static function httpStatus(int $port, string $hostname): int
    {
        $context = \stream_context_create(['http' => ['header' => "Host: $hostname\r\n", 'timeout' => 5, 'ignore_errors' => true]]);
        $http_response_header = [];
        @\file_get_contents("http://127.0.0.1:$port/", false, $context);
        return \preg_match('~^HTTP/\S+ (\d{3})~', $http_response_header[0] ?? '', $m) === 1 ? (int) $m[1] : 0;
    }

    private static function freePort(): int
    {
        $socket = \stream_socket_server('tcp://127.0.0.1:0');
        $name = (string) \stream_socket_get_name($socket, false);
        \fclose($socket);
        return (int) \substr($name, (int) \strrpos($name, ':') + 1);
    }
}
