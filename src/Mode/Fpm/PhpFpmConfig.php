<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

/**
 * php-fpm.conf for fpm mode: php-fpm in the foreground under Weft's supervision, one static pool of
 * --workers processes on a Unix socket in the runtime folder.
 */
final class PhpFpmConfig
{
    public const POOL = 'weft';
    public const STATUS_PATH = '/fpm-status';

    public static function render(FpmSettings $s): string
    {
        $q = self::quote(...);
        // With --log-file, php-fpm's own messages go through the supervisor's FIFO too: php-fpm (root when
        // Weft runs as root) would reopen the path itself on SIGUSR1, following whatever symlink was
        // planted there after a rotation; the supervisor's opening refuses one.
        $errorLog = $s->logFile !== null ? $s->logPipe() : '/proc/self/fd/2';
        $user = $s->root ? "user = {$q($s->user)}\ngroup = {$q($s->group)}\n" : '';
        $admin = '';
        foreach (self::poolIni($s) as $name => $value) {
            $admin .= "php_admin_value[$name] = {$q($value)}\n";
        }
        $pool = self::POOL;
        $grace = (int) \ceil($s->grace);
        return <<<CONF
            ; Written by `bin/weft serve {$s->app} --mode fpm`; rewritten on every start.
            [global]
            pid = {$q($s->path('php-fpm.pid'))}
            error_log = {$q($errorLog)}
            log_level = warning
            log_limit = 8192
            daemonize = no
            ; SIGQUIT (stop, reload) lets a busy worker finish its request for this long.
            process_control_timeout = {$grace}s
            emergency_restart_threshold = 0

            [{$pool}]
            {$user}listen = {$q($s->fpmSocket())}
            listen.backlog = 4096
            listen.mode = 0600
            pm = static
            pm.max_children = {$s->workers}
            pm.max_requests = {$s->maxRequests}
            pm.status_path = {$q(self::STATUS_PATH)}
            pm.status_listen = {$q($s->fpmStatusSocket())}
            chdir = {$q((string) \getcwd())}
            ; The environment reaches the application (DATABASE_URL and the like), as in the other modes.
            clear_env = no
            catch_workers_output = yes
            decorate_workers_output = no
            ; opcache.preload, opcache.preload_user and opcache.enable take effect in the master, so
            ; they are also given as -d on php-fpm's command line; listed here for the record.
            {$admin}php_admin_flag[enable_post_data_reading] = off

            CONF;
    }

    /**
     * The php-fpm command line: the master reads opcache.* (preload above all) before any pool.
     *
     * @return list<string>
     */
    public static function command(FpmSettings $s): array
    {
        $command = [$s->phpFpm, '--nodaemonize', '--fpm-config', $s->path('php-fpm.conf')];
        if ($s->root) {
            $command[] = '--allow-to-run-as-root';
        }
        foreach (self::masterIni($s) as $name => $value) {
            $command[] = '-d';
            $command[] = $name . '=' . $value;
        }
        return $command;
    }

    /** @return array<string, string> */
    public static function masterIni(FpmSettings $s): array
    {
        $ini = ['expose_php' => '0', 'opcache.enable' => $s->opcache ? '1' : '0'];
        if ($s->opcache) {
            $ini['opcache.validate_timestamps'] = '0';
            $ini['opcache.jit'] = 'off';
            $ini['opcache.jit_buffer_size'] = '0';
            if ($s->preload !== null) {
                $ini['opcache.preload'] = $s->preload;
                $ini['opcache.preload_user'] = $s->user;
            }
        }
        return $ini;
    }

    /** @return array<string, string> */
    private static function poolIni(FpmSettings $s): array
    {
        $ini = self::masterIni($s);
        // Setting opcache.enable=1 per pool only earns a warning ("can't be temporary enabled").
        unset($ini['expose_php'], $ini['opcache.jit_buffer_size']);
        if ($s->opcache) {
            unset($ini['opcache.enable']);
        }
        // The response goes out as the handler built it: no "Content-Type: text/html" added to one
        // that has none, no ";charset=UTF-8" appended to text/* types, no user-level buffer.
        // error_log() and PHP's warnings go to the supervisor's FIFO, which tags them (see LogPipe).
        return $ini + ['default_mimetype' => '', 'default_charset' => '', 'output_buffering' => '0', 'error_log' => $s->logPipe()];
    }

    private static function quote(string $value): string
    {
        if (\preg_match('/[\x00-\x1f\x7f"$\\\\]/', $value) === 1) {
            throw new \InvalidArgumentException(\sprintf('fpm mode cannot put "%s" into php-fpm.conf (quotes, "$", "\\" and control characters are not allowed)', \addcslashes($value, "\0..\37\177")));
        }
        return '"' . $value . '"';
    }
}
