<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

/**
 * nginx.conf for fpm mode: nginx in the foreground under Weft's supervision, everything it writes
 * inside the runtime folder, every request to the one front controller over php-fpm's Unix socket.
 */
final class NginxConfig
{
    public static function render(FpmSettings $s): string
    {
        $q = self::quote(...);
        $user = $s->root ? "user {$q($s->user)} {$q($s->group)};\n" : '';
        // Kept-alive connections to php-fpm are off unless asked for (FpmSettings::$upstreamKeepalive):
        // php-fpm gives a worker to a connection until nginx closes it, so every idle connection in
        // nginx's cache holds a worker, while requests that found the cache empty open new connections
        // that wait in php-fpm's backlog for a worker to come free. Under more concurrency than workers
        // the cached connections keep getting the workers and the queued ones starve (their latency
        // grows to seconds while the others' stays at milliseconds). When on, the cache stays smaller
        // than the pool, or a queued connection could wait for ever.
        $keepConn = $s->upstreamKeepalive ? 'on' : 'off';
        $keepalive = $s->upstreamKeepalive && $s->workers > 1 ? "        keepalive " . ($s->workers - 1) . ";\n        keepalive_timeout 60s;\n" : '';
        // The one socket, listed three times: nginx retries a request on the next server of the
        // group when a connection fails or is reset before a response header arrived, and a reload
        // of php-fpm resets the connections its quitting workers had accepted. Without a second
        // "server" there is nothing to retry on; max_fails=0 keeps nginx from ever marking it down.
        $servers = \str_repeat("        server {$q('unix:' . $s->fpmSocket())} max_fails=0;\n", 3);
        // A client connection and its upstream connection: two descriptors per request in flight.
        $files = self::fileLimit();
        $connections = \max(1024, \min(16384, \intdiv($files, 2)));
        $app = self::fastcgi($s, [], '            ');
        $ping = self::fastcgi($s, ['WEFT_PING' => '1'], '            ');
        return <<<CONF
            # Written by `bin/weft serve {$s->app} --mode fpm`; rewritten on every start.
            daemon off;
            master_process on;
            worker_processes 1;
            {$user}pid {$q($s->path('nginx.pid'))};
            error_log stderr warn;
            worker_rlimit_nofile {$files};

            events {
                worker_connections {$connections};
                multi_accept on;
            }

            http {
                access_log off;
                server_tokens off;
                default_type application/octet-stream;
                client_body_temp_path {$q($s->path('nginx/client_body'))};
                proxy_temp_path {$q($s->path('nginx/proxy'))};
                fastcgi_temp_path {$q($s->path('nginx/fastcgi'))};
                uwsgi_temp_path {$q($s->path('nginx/uwsgi'))};
                scgi_temp_path {$q($s->path('nginx/scgi'))};
                client_max_body_size {$s->maxBody};
                client_body_buffer_size 128k;
                keepalive_timeout 75s;
                keepalive_requests 100000;
                tcp_nodelay on;
                reset_timedout_connection on;
                fastcgi_buffer_size 16k;
                fastcgi_buffers 16 16k;
                fastcgi_max_temp_file_size 0;

                upstream weft_fpm {
            {$servers}{$keepalive}    }

                server {
                    listen {$q($s->address())} backlog=4096 default_server;
                    server_name _;

                    location / {
                        fastcgi_pass weft_fpm;
                        fastcgi_keep_conn {$keepConn};
            {$app}
                    }
                }

                # Weft's own: readiness probe and php-fpm's status, on a socket in the runtime folder only.
                server {
                    listen {$q('unix:' . $s->internalSocket())};

                    location = /ping {
                        fastcgi_pass weft_fpm;
                        fastcgi_keep_conn {$keepConn};
            {$ping}
                    }

                    location = /fpm-status {
                        fastcgi_pass {$q('unix:' . $s->fpmStatusSocket())};
                        fastcgi_param SCRIPT_NAME /fpm-status;
                        fastcgi_param SCRIPT_FILENAME /fpm-status;
                        fastcgi_param REQUEST_METHOD \$request_method;
                        fastcgi_param QUERY_STRING \$query_string;
                        fastcgi_param REQUEST_URI \$request_uri;
                    }

                    location / {
                        return 404;
                    }
                }
            }

            CONF;
    }

    /** As many descriptors as the hard limit allows (raising it needs CAP_SYS_RESOURCE), at most 65536. */
    private static function fileLimit(): int
    {
        $limits = \function_exists('posix_getrlimit') ? \posix_getrlimit() : false;
        $hard = \is_array($limits) ? ($limits['hard openfiles'] ?? 'unlimited') : 'unlimited';
        return $hard === 'unlimited' ? 65536 : \max(1024, \min(65536, (int) $hard));
    }

    /** @param array<string, string> $extra */
    private static function fastcgi(FpmSettings $s, array $extra, string $indent): string
    {
        $params = [
            'QUERY_STRING' => '$query_string',
            'REQUEST_METHOD' => '$request_method',
            'CONTENT_TYPE' => '$content_type',
            'CONTENT_LENGTH' => '$content_length',
            'SCRIPT_NAME' => '/index.php',
            'SCRIPT_FILENAME' => self::quote($s->frontController),
            'REQUEST_URI' => '$request_uri',
            'DOCUMENT_URI' => '$document_uri',
            'DOCUMENT_ROOT' => self::quote(\dirname($s->app)),
            'SERVER_PROTOCOL' => '$server_protocol',
            'REQUEST_SCHEME' => '$scheme',
            'GATEWAY_INTERFACE' => 'CGI/1.1',
            'SERVER_SOFTWARE' => 'nginx/$nginx_version',
            'REMOTE_ADDR' => '$remote_addr',
            'REMOTE_PORT' => '$remote_port',
            'SERVER_ADDR' => '$server_addr',
            'SERVER_PORT' => '$server_port',
            'SERVER_NAME' => '$server_name',
            'REDIRECT_STATUS' => '200',
            'HTTP_PROXY' => '"" if_not_empty', // httpoxy: a client's "Proxy:" header must not become HTTP_PROXY
            'WEFT_APP' => self::quote($s->app),
        ];
        if ($s->autoload !== '') {
            $params['WEFT_AUTOLOAD'] = self::quote($s->autoload);
        }
        // The front controller logs straight to the log file, or to the supervisor through its FIFO.
        $params['WEFT_LOG'] = self::quote($s->logFile ?? $s->recordPipe());
        if ($s->debug) {
            $params['WEFT_DEBUG'] = '1';
        }
        $lines = [];
        foreach ($params + $extra as $name => $value) {
            $lines[] = $indent . 'fastcgi_param ' . $name . ' ' . $value . ';';
        }
        return \implode("\n", $lines);
    }

    /** A path or word as one nginx token. "$" cannot be escaped in nginx strings, so it is refused. */
    public static function quote(string $value): string
    {
        if (\preg_match('/[\x00-\x1f\x7f$]/', $value) === 1) {
            throw new \InvalidArgumentException(\sprintf('fpm mode cannot put "%s" into nginx.conf ("$" and control characters are not allowed)', \addcslashes($value, "\0..\37\177")));
        }
        return '"' . \addcslashes($value, '"\\') . '"';
    }
}
