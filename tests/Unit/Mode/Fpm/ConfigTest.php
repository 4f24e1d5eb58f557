<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Mode\Fpm;

use PHPUnit\Framework\TestCase;
use Weft\Mode\Fpm\FpmSettings;
use Weft\Mode\Fpm\NginxConfig;
use Weft\Mode\Fpm\PhpFpmConfig;

final class ConfigTest extends TestCase
{
    private static function settings(array $overrides = []): FpmSettings
    {
        return new FpmSettings(...$overrides + [
            'app' => '/srv/app/app.php',
            'runtimeDir' => '/run/weft.pid.fpm',
            'host' => '127.0.0.1',
            'port' => 8080,
            'workers' => 4,
            'maxRequests' => 500,
            'maxBody' => 1024 * 1024,
            'autoload' => '/srv/weft/vendor/autoload.php',
            'frontController' => '/srv/weft/src/Mode/Fpm/front.php',
        ]);
    }

    public function testNginxRunsInTheForegroundWithEverythingInTheRuntimeFolder(): void
    {
        $conf = NginxConfig::render(self::settings());
        foreach ([
            'daemon off;', 'master_process on;', 'worker_processes 1;', 'pid "/run/weft.pid.fpm/nginx.pid";',
            'access_log off;', 'client_body_temp_path "/run/weft.pid.fpm/nginx/client_body";',
            'fastcgi_temp_path "/run/weft.pid.fpm/nginx/fastcgi";', 'listen "127.0.0.1:8080" backlog=4096',
            'client_max_body_size 1048576;', 'fastcgi_pass weft_fpm;',
            'server "unix:/run/weft.pid.fpm/php-fpm.sock" max_fails=0;',
            'fastcgi_param SCRIPT_FILENAME "/srv/weft/src/Mode/Fpm/front.php";',
            'fastcgi_param WEFT_APP "/srv/app/app.php";',
            'fastcgi_param WEFT_AUTOLOAD "/srv/weft/vendor/autoload.php";',
            'listen "unix:/run/weft.pid.fpm/internal.sock";',
            'fastcgi_pass "unix:/run/weft.pid.fpm/php-fpm-status.sock";',
        ] as $line) {
            self::assertStringContainsString($line, $conf);
        }
        self::assertStringNotContainsString('user ', $conf, 'only as root');
        self::assertStringContainsString('user "root" "root";', NginxConfig::render(self::settings(['root' => true])));
    }

    public function testNoKeptAliveConnectionsToPhpFpmByDefault(): void
    {
        $conf = NginxConfig::render(self::settings());
        self::assertStringContainsString('fastcgi_keep_conn off;', $conf);
        self::assertStringNotContainsString('fastcgi_keep_conn on;', $conf);
        self::assertStringNotContainsString('keepalive ', $conf);
        self::assertStringContainsString('keepalive_timeout 75s;', $conf, 'client keep-alive is on');
    }

    public function testWithKeepAliveNginxCachesFewerIdleConnectionsThanThereAreWorkers(): void
    {
        $conf = NginxConfig::render(self::settings(['workers' => 4, 'upstreamKeepalive' => true]));
        self::assertStringContainsString('fastcgi_keep_conn on;', $conf);
        self::assertStringContainsString('keepalive 3;', $conf);
        self::assertStringNotContainsString('keepalive ', NginxConfig::render(self::settings(['workers' => 1, 'upstreamKeepalive' => true])));
    }

    public function testIpv6AndWildcardAddresses(): void
    {
        $v6 = self::settings(['host' => '::1']);
        self::assertSame('[::1]:8080', $v6->address());
        self::assertStringContainsString('listen "[::1]:8080"', NginxConfig::render($v6));
        self::assertSame('127.0.0.1:8080', self::settings(['host' => '0.0.0.0'])->connectAddress());
        self::assertSame('[::1]:8080', self::settings(['host' => '::'])->connectAddress());
    }

    public function testPathsNginxCannotHoldAreRefused(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        NginxConfig::render(self::settings(['app' => '/srv/$HOME/app.php']));
    }

    public function testQuotesAreEscapedForNginx(): void
    {
        self::assertSame('"/a \"b\" \\\\c"', NginxConfig::quote('/a "b" \c'));
    }

    public function testPhpFpmPool(): void
    {
        $conf = PhpFpmConfig::render(self::settings());
        foreach ([
            'daemonize = no', 'pid = "/run/weft.pid.fpm/php-fpm.pid"', 'error_log = "/proc/self/fd/2"',
            'listen = "/run/weft.pid.fpm/php-fpm.sock"', 'listen.backlog = 4096', 'pm = static',
            'pm.max_children = 4', 'pm.max_requests = 500', 'clear_env = no', 'catch_workers_output = yes',
            'pm.status_path = "/fpm-status"', 'pm.status_listen = "/run/weft.pid.fpm/php-fpm-status.sock"',
            'php_admin_value[opcache.validate_timestamps] = "0"', 'php_admin_value[opcache.jit] = "off"',
            'php_admin_flag[enable_post_data_reading] = off', 'php_admin_value[default_mimetype] = ""',
        ] as $line) {
            self::assertStringContainsString($line, $conf);
        }
        self::assertStringNotContainsString('php_admin_value[opcache.preload]', $conf);
        self::assertStringNotContainsString('user = ', $conf, 'only as root');
        self::assertStringContainsString("user = \"root\"\ngroup = \"root\"", PhpFpmConfig::render(self::settings(['root' => true])));
        // php-fpm never opens --log-file itself: its messages go through the supervisor's FIFO.
        $withFile = PhpFpmConfig::render(self::settings(['logFile' => '/var/log/weft.log']));
        self::assertStringContainsString('error_log = "/run/weft.pid.fpm/log.fifo"', $withFile);
        self::assertStringNotContainsString('/var/log/weft.log', $withFile);
    }

    public function testOpcacheOffAndPreloadReachTheMaster(): void
    {
        $off = self::settings(['opcache' => false]);
        self::assertStringContainsString('php_admin_value[opcache.enable] = "0"', PhpFpmConfig::render($off));
        self::assertContains('opcache.enable=0', PhpFpmConfig::command($off));
        self::assertNotContains('opcache.validate_timestamps=0', PhpFpmConfig::command($off));

        $preload = self::settings(['preload' => '/srv/app/app-preload.php', 'user' => 'www-data', 'root' => true]);
        $command = PhpFpmConfig::command($preload);
        self::assertSame(['/usr/sbin/php-fpm8.2', '--nodaemonize', '--fpm-config', '/run/weft.pid.fpm/php-fpm.conf', '--allow-to-run-as-root'], \array_slice($command, 0, 5));
        self::assertContains('opcache.enable=1', $command);
        self::assertContains('opcache.preload=/srv/app/app-preload.php', $command);
        self::assertContains('opcache.preload_user=www-data', $command);
        self::assertStringContainsString('php_admin_value[opcache.preload] = "/srv/app/app-preload.php"', PhpFpmConfig::render($preload));
    }

    public function testSettingsRefuseWhatCannotRun(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        self::settings(['port' => 0]);
    }
}
