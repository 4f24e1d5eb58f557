<?php

declare(strict_types=1);

namespace Weft\Bench\Scenario;

use Weft\Bench\Environment;
use Weft\Bench\Load\Measurement;
use Weft\Bench\Load\Probe;
use Weft\Bench\Load\Wrk;
use Weft\Bench\Load\WrkParser;
use Weft\Bench\Process\Process;
use Weft\Bench\Report\Check;
use Weft\Bench\Report\Column;
use Weft\Bench\Report\Findings;
use Weft\Bench\Report\Format;
use Weft\Bench\Row;
use Weft\Bench\Tools;

/**
 * Issue 13, section 3: a 1 MB static file, and a 10 KB JSON file gzip-compressed for a client that
 * asks for it, from `bin/weft serve --static` and from nginx serving the same folder in the same
 * run. One worker process each; nginx with sendfile and gzip at the same level and thresholds as
 * Weft's defaults.
 */
final class StaticScenario extends HttpScenario
{
    private const FILES = [
        '1mb' => ['path' => '/file-1mb.bin', 'gzip' => false],
        '10kb-json-gzip' => ['path' => '/data-10kb.json', 'gzip' => true],
    ];

    private ?string $root = null;

    public function name(): string
    {
        return 'static';
    }

    public function title(): string
    {
        return 'static — files and gzip against nginx';
    }

    public function description(): string
    {
        return 'GET of a 1 MB file, and of a 10 KB JSON file with "Accept-Encoding: gzip" (compressed on every request: '
            . 'neither server caches the compressed bytes), served by `bin/weft serve --static DIR` (1 worker) and by nginx '
            . '(1 worker process, sendfile on, gzip_comp_level 6, gzip_min_length 1024) from the same folder. wrk keeps its '
            . 'connections alive.';
    }

    public function unavailable(Environment $env): ?string
    {
        return parent::unavailable($env) ?? self::missingFiles($env, ['hello.php']);
    }

    public function rows(Environment $env): array
    {
        $s = $this->settings;
        $concurrency = $s->axis([10, 100], [50], $s->concurrency);
        $rows = [];
        foreach (\array_keys(self::FILES) as $file) {
            foreach (['nginx', 'weft'] as $server) {
                foreach ($concurrency as $c) {
                    $rows[] = new Row($this->name(), ['file' => $file, 'server' => $server, 'workers' => 1, 'concurrency' => $c]);
                }
            }
        }
        $rows = $this->preSkipAll($rows, $env);
        if (!$env->tools->has('nginx')) {
            foreach ($rows as $row) {
                if ($row->param('server') === 'nginx') {
                    $row->skip(Tools::missing('nginx'));
                }
            }
        }
        return $rows;
    }

    public function run(Row $row, Environment $env): void
    {
        $root = $this->root($env);
        $file = self::FILES[(string) $row->param('file')];
        $headers = $file['gzip'] ? ['Accept-Encoding' => 'gzip'] : [];
        $expected = (string) \file_get_contents($root . $file['path']);
        $check = static function (array $answer) use ($expected, $file): ?string {
            if ($answer['status'] !== 200) {
                return "status {$answer['status']}";
            }
            $body = $answer['body'];
            if ($file['gzip']) {
                if (($answer['headers']['content-encoding'] ?? '') !== 'gzip') {
                    return 'not gzip-encoded';
                }
                $body = (string) @\gzdecode($body);
            }
            return $body === $expected ? null : 'the body differs from the file (' . \strlen($body) . ' bytes)';
        };
        $script = null;
        if ($file['gzip']) {
            $script = $env->outDir . '/static-gzip.lua';
            if (!\is_file($script)) {
                \file_put_contents($script, "-- Written by bin/weft bench static: ask for gzip, as a browser does.\nwrk.headers[\"Accept-Encoding\"] = \"gzip\"\n");
            }
        }
        if ($row->param('server') === 'weft') {
            $arguments = ['--workers', '1', '--loop', self::defaultLoops($env)[0], '--static', $root];
            $server = $this->startServer($row, $env, self::exampleFile($env, 'hello.php'), $arguments);
            if ($server === null) {
                return;
            }
            try {
                $this->measure($row, $env, $server->port, $server->pid(), $file['path'], $headers, $check, $script);
            } finally {
                $note = $server->stop();
                if ($note !== null) {
                    $row->notes[] = "server $note";
                }
            }
            return;
        }
        $nginx = $this->startNginx($env, $root, $row);
        if ($nginx === null) {
            return;
        }
        try {
            $this->measure($row, $env, $nginx[1], $nginx[0]->pid(), $file['path'], $headers, $check, $script);
        } finally {
            $nginx[0]->terminate(3.0);
            $env->processes->forget($nginx[0]);
        }
    }

    /**
     * @param array<string, string> $headers
     * @param \Closure(array{status: int, headers: array<string, string>, body: string}): ?string $check
     */
    private function measure(Row $row, Environment $env, int $port, int $pid, string $path, array $headers, \Closure $check, ?string $script): void
    {
        try {
            $problem = $check(Probe::get('127.0.0.1', $port, $path, 15.0, $headers));
        } catch (\RuntimeException $e) {
            $problem = $e->getMessage();
        }
        if ($problem !== null) {
            $row->fail("wrong answer to GET $path: $problem");
            return;
        }
        $seconds = $env->settings->duration();
        $run = Measurement::run(
            $env,
            $pid,
            Wrk::command((string) $env->tools->path('wrk'), "http://127.0.0.1:$port$path", (int) $row->param('concurrency'), $seconds, $script),
            'wrk-static',
            $seconds + Wrk::TIMEOUT + 15,
        );
        $result = WrkParser::parse($run['output']);
        $row->metrics = $result->metrics() + Measurement::serverMetrics($run['usage'], $result->requests);
        $row->status = Row::OK;
    }

    /** @return array{0: Process, 1: int}|null nginx's master process and port */
    private function startNginx(Environment $env, string $root, Row $row): ?array
    {
        $port = $env->port() ?: self::freePort(); // --port-range, when given
        $dir = $env->outDir . '/static-nginx';
        @\mkdir($dir . '/temp', 0777, true);
        $user = '';
        if (\posix_geteuid() === 0) {
            // As root nginx would switch its worker to "nobody", which may not read the folder.
            $name = \posix_getpwuid(0)['name'] ?? 'root';
            $group = \posix_getgrgid(0)['name'] ?? 'root';
            $user = "user $name $group;\n";
        }
        $conf = <<<CONF
            # Written by bin/weft bench static.
            daemon off;
            master_process on;
            worker_processes 1;
            {$user}pid $dir/nginx.pid;
            error_log stderr warn;
            events { worker_connections 4096; }
            http {
                access_log off;
                server_tokens off;
                include /etc/nginx/mime.types;
                default_type application/octet-stream;
                client_body_temp_path $dir/temp/body;
                proxy_temp_path $dir/temp/proxy;
                fastcgi_temp_path $dir/temp/fastcgi;
                uwsgi_temp_path $dir/temp/uwsgi;
                scgi_temp_path $dir/temp/scgi;
                sendfile on;
                tcp_nopush on;
                tcp_nodelay on;
                keepalive_requests 100000;
                gzip on;
                gzip_comp_level 6;
                gzip_min_length 1024;
                gzip_types application/json text/plain text/css application/javascript;
                gzip_vary on;
                server {
                    listen 127.0.0.1:$port backlog=4096;
                    root $root;
                }
            }
            CONF;
        \file_put_contents("$dir/nginx.conf", $conf);
        $base = $env->logBase('static-nginx');
        $process = $env->processes->start([...$env->serverPrefix(), (string) $env->tools->path('nginx'), '-c', "$dir/nginx.conf", '-p', $dir], "$base.out", "$base.log");
        $deadline = \microtime(true) + 15;
        while (\microtime(true) < $deadline) {
            $socket = @\stream_socket_client("tcp://127.0.0.1:$port", $errno, $error, 0.2);
            if ($socket !== false) {
                \fclose($socket);
                return [$process, $port];
            }
            if (!$process->isRunning()) {
                break;
            }
            \usleep(20_000);
        }
        $row->fail('nginx did not start: ' . $process->stderrTail(3));
        $process->terminate(1.0);
        $env->processes->forget($process);
        return null;
    }

    private static function freePort(): int
    {
        $server = \stream_socket_server('tcp://127.0.0.1:0');
        if ($server === false) {
            throw new \RuntimeException('cannot find a free port');
        }
        $name = (string) \stream_socket_get_name($server, false);
        \fclose($server);
        return (int) \substr($name, (int) \strrpos($name, ':') + 1);
    }

    /** The folder both servers serve: a 1 MB file of incompressible bytes and a 10 KB JSON document. */
    private function root(Environment $env): string
    {
        if ($this->root !== null) {
            return $this->root;
        }
        $root = $env->outDir . '/static-root';
        @\mkdir($root, 0755, true);
        $bytes = '';
        for ($i = 0; \strlen($bytes) < 1024 * 1024; $i++) {
            $bytes .= \hash('sha512', "weft static bench $i", true);
        }
        \file_put_contents("$root/file-1mb.bin", \substr($bytes, 0, 1024 * 1024));
        $rows = [];
        for ($i = 0; \strlen((string) \json_encode($rows)) < 10 * 1024 - 120; $i++) {
            $rows[] = ['id' => $i, 'name' => "customer $i", 'email' => "customer$i@example.com", 'active' => $i % 3 !== 0];
        }
        \file_put_contents("$root/data-10kb.json", \json_encode($rows));
        return $this->root = $root;
    }

    public function finish(Environment $env): void
    {
        parent::finish($env);
        if ($this->root !== null) {
            @\unlink($this->root . '/file-1mb.bin');
            @\unlink($this->root . '/data-10kb.json');
            @\rmdir($this->root);
            $this->root = null;
        }
    }

    public function columns(): array
    {
        return [
            Column::param('file', 'file'),
            Column::param('server', 'server'),
            Column::param('conc.', 'concurrency'),
            ...Column::http(),
            Column::status(),
        ];
    }

    public function findings(array $rows): array
    {
        $ok = Findings::ok($rows);
        if ($ok === []) {
            return [Findings::NOTHING_RAN];
        }
        $out = [];
        foreach ($ok as $weft) {
            if ($weft->param('server') !== 'weft') {
                continue;
            }
            foreach (Findings::ok($ok, ['server' => 'nginx', 'file' => $weft->param('file'), 'concurrency' => $weft->param('concurrency')]) as $nginx) {
                $out[] = \sprintf(
                    '%s at concurrency %d: Weft %s req/s at %s µs CPU/req, nginx %s req/s at %s µs CPU/req (Weft uses %s the CPU per request).',
                    $weft->param('file'),
                    $weft->param('concurrency'),
                    Format::rate($weft->number('rps')),
                    Format::number($weft->number('cpu_us_per_req')),
                    Format::rate($nginx->number('rps')),
                    Format::number($nginx->number('cpu_us_per_req')),
                    ($weft->number('cpu_us_per_req') ?? 0) > 0 && ($nginx->number('cpu_us_per_req') ?? 0) > 0
                        ? Format::times((float) $weft->number('cpu_us_per_req') / (float) $nginx->number('cpu_us_per_req'))
                        : Format::NONE,
                );
            }
        }
        $out[] = Findings::errorsLine($rows);
        return $out;
    }

    public function checks(array $rows): array
    {
        $checks = [];
        foreach (\array_keys(self::FILES) as $file) {
            $weft = Findings::ok($rows, ['file' => $file, 'server' => 'weft']);
            $nginx = Findings::ok($rows, ['file' => $file, 'server' => 'nginx']);
            $claim = "$file: req/s and CPU µs/req against nginx in the same run";
            $checks[] = $weft === [] || $nginx === []
                ? Check::unknown($claim, $weft === [] ? 'no Weft row ran' : 'no nginx row ran')
                : new Check($claim, true, \sprintf('best Weft %s req/s, best nginx %s req/s', Format::rate(Findings::best($weft)->number('rps')), Format::rate(Findings::best($nginx)->number('rps'))));
        }
        return $checks;
    }

    public function notes(Environment $env): array
    {
        return ['Both servers run one worker process on the server CPU; wrk runs on the other when pinned. nginx serves with sendfile(2), Weft reads the file in 256 KB chunks (files above 64 KB) and writes them through its event loop.'];
    }
}
