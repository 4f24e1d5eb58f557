<?php

declare(strict_types=1);

namespace Weft\Cli;

use Weft\Mode\Fpm\Autoload;
use Weft\Mode\Fpm\Binaries;
use Weft\Mode\Fpm\FpmSettings;
use Weft\Mode\Fpm\MissingBinary;
use Weft\Mode\Fpm\ProcessTable;
use Weft\Mode\Fpm\Supervisor;
use Weft\Server\Logger;
use Weft\Server\RuntimeFiles;

/** `bin/weft serve APP.php --mode fpm`: the same application behind nginx and php-fpm. */
final class FpmCommand
{
    /** Longest path of a Unix socket (sun_path holds 108 bytes with the NUL). */
    private const MAX_SOCKET_PATH = 107;

    public function run(string $app, Options $options, string $pidFile, ?string $logFile): int
    {
        if ($options->get('opcache') === 'off' && $options->get('preload') !== null) {
            throw new UsageError("option '--preload' needs opcache: drop '--opcache off'");
        }
        $preload = $options->get('preload');
        if ($preload !== null) {
            if (!\is_file($preload)) {
                throw new UsageError("preload script '$preload' not found (write one with: bin/weft preload APP.php)");
            }
            $preload = (string) \realpath($preload);
        }
        try {
            $binaries = Binaries::find(\getenv());
        } catch (MissingBinary $e) {
            \fwrite(\STDERR, 'weft: ' . $e->getMessage() . "\n");
            return 1;
        }

        $host = $options->get('host');
        $port = self::claimPort($host, $options->get('port'), $error);
        if ($port === null) {
            \fwrite(\STDERR, "weft: cannot listen on port {$options->get('port')}: $error\n");
            return 1;
        }

        $user = \posix_getpwuid(\posix_geteuid());
        $group = \posix_getgrgid(\posix_getegid());
        try {
            $settings = new FpmSettings(
                app: $app,
                runtimeDir: self::runtimeDir($pidFile, $port),
                host: $host,
                port: $port,
                workers: $options->get('workers'),
                maxRequests: $options->get('max-requests'),
                maxBody: $options->get('max-body'),
                opcache: $options->get('opcache') === 'on',
                preload: $preload,
                logFile: $logFile === null ? null : self::absolute($logFile),
                debug: $options->get('debug'),
                grace: $options->get('grace'),
                user: \is_array($user) ? $user['name'] : 'root',
                group: \is_array($group) ? $group['name'] : 'root',
                root: \posix_geteuid() === 0,
                autoload: Autoload::file(),
                nginx: $binaries->nginx,
                phpFpm: $binaries->phpFpm,
                // An experiment's switch, not an option: see NginxConfig for why it is off.
                upstreamKeepalive: \getenv('WEFT_FPM_KEEPALIVE') === '1',
            );
        } catch (\InvalidArgumentException $e) {
            throw new UsageError($e->getMessage());
        }

        $supervise = static function (?\Closure $onReady) use ($settings, $pidFile, $options): int {
            $logger = new Logger($settings->logFile, $options->get('log-level'), $options->get('log-format'));
            // php-fpm keeps the environment (clear_env = no): its front controller logs alike.
            \putenv('WEFT_LOG_LEVEL=' . $options->get('log-level'));
            \putenv('WEFT_LOG_FORMAT=' . $options->get('log-format'));
            return (new Supervisor($settings, $logger, self::absolute($pidFile)))->run($onReady);
        };
        if ($options->get('daemon')) {
            return Daemon::start($pidFile, (string) $logFile, static fn (\Closure $ready, \Closure $failed): int
                => $supervise(static fn (int $port) => $ready("{$settings->host}:$port")));
        }
        return $supervise(static function (int $port): void {
            echo "READY $port\n";
        });
    }

    /**
     * Binds the address once to find out whether it is free: nginx's own error would come later and
     * only in its log. Port 0 becomes a free port here, since nginx needs a concrete one.
     */
    private static function claimPort(string $host, int $port, ?string &$error): ?int
    {
        $address = (\str_contains($host, ':') ? '[' . \trim($host, '[]') . ']' : $host) . ':' . $port;
        $probe = @\stream_socket_server('tcp://' . $address, $errno, $message);
        if ($probe === false) {
            $error = "$address: $message";
            return null;
        }
        $name = (string) \stream_socket_get_name($probe, false);
        \fclose($probe);
        return (int) \substr($name, (int) \strrpos($name, ':') + 1);
    }

    /** Beside the pid file, unless that makes socket paths too long for the kernel. */
    private static function runtimeDir(string $pidFile, int $port): string
    {
        $dir = self::absolute($pidFile) . '.fpm';
        if (\strlen($dir . '/php-fpm-status.sock') <= self::MAX_SOCKET_PATH) {
            return $dir;
        }
        // Weft's private runtime directory (short, and no other user can create names in it).
        return RuntimeFiles::directory() . "/fpm-$port-" . \substr(\md5($dir), 0, 8);
    }

    private static function absolute(string $path): string
    {
        if (\str_starts_with($path, '/')) {
            return $path;
        }
        $dir = \realpath(\dirname($path));
        return ($dir === false ? \getcwd() . '/' . \dirname($path) : $dir) . '/' . \basename($path);
    }
}
