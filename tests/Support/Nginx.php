<?php

declare(strict_types=1);

namespace Weft\Tests\Support;

/** A test's own nginx: everything under one directory, in the foreground, as the invoking user (root: root). */
final class Nginx
{
    public const BINARY = '/usr/sbin/nginx';

    /**
     * Writes $dir/nginx.conf: one worker, its pid, logs and temporary files under $dir, and $http inside
     * the http block ($dir/logs must exist).
     */
    public static function writeConfig(string $dir, string $http, int $connections = 1024): void
    {
        $user = \posix_geteuid() === 0 ? 'user root root;' : '';
        \file_put_contents("$dir/nginx.conf", <<<CONF
            $user
            daemon off;
            worker_processes 1;
            pid $dir/nginx.pid;
            error_log $dir/logs/error.log warn;
            events { worker_connections $connections; }
            http {
                access_log off;
                client_body_temp_path $dir/body;
                proxy_temp_path $dir/proxy;
                fastcgi_temp_path $dir/fastcgi;
                uwsgi_temp_path $dir/uwsgi;
                scgi_temp_path $dir/scgi;
            $http
            }
            CONF);
    }

    /** @return list<string> the command that runs the nginx of $dir/nginx.conf */
    public static function command(string $dir): array
    {
        return [self::BINARY, '-p', "$dir/", '-c', "$dir/nginx.conf", '-e', "$dir/logs/error.log"];
    }

    /** @return resource the nginx of $dir/nginx.conf, its stderr in $dir/logs/stderr.log */
    public static function start(string $dir)
    {
        $process = \proc_open(self::command($dir), [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', "$dir/logs/stderr.log", 'w']], $pipes);
        if (!\is_resource($process)) {
            throw new \RuntimeException('nginx could not be started');
        }
        return $process;
    }
}
