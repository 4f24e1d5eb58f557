<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\ServerProcess;

/** `--metrics`: /health and /metrics scraped over HTTP from a real server, the format checked by promtool. */
final class MetricsTest extends TestCase
{
    private const APP = __DIR__ . '/fixtures/ops-app.php';

    public function testMetricsCountResponsesAndPassPromtool(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '2', '--metrics', '127.0.0.1:0']);
        $metrics = self::metricsAddress($server);

        [$status, , $body] = self::get("$metrics/health");
        self::assertSame(200, $status);
        self::assertSame(['status' => 'ok', 'reason' => 'ok', 'ready_workers' => 2, 'workers' => 2], \json_decode($body, true));

        foreach (['/', '/', '/', '/missing', '/redirect', '/throw'] as $path) {
            self::get("http://{$server->address()}$path");
        }
        // Workers report every second: wait for the figures rather than sleeping.
        $text = ServerProcess::waitFor(static function () use ($metrics) {
            $text = self::get("$metrics/metrics")[2];
            return \str_contains($text, 'weft_http_request_duration_seconds_count 6') ? $text : null;
        }, 10, 'the request figures in /metrics');

        [$status, $headers] = self::get("$metrics/metrics");
        self::assertSame(200, $status);
        self::assertStringContainsString('text/plain; version=0.0.4', $headers['content-type']);
        self::assertStringContainsString('weft_http_responses_total{code="2xx"} 3', $text);
        self::assertStringContainsString('weft_http_responses_total{code="3xx"} 1', $text);
        self::assertStringContainsString('weft_http_responses_total{code="4xx"} 1', $text);
        self::assertStringContainsString('weft_http_responses_total{code="5xx"} 1', $text);
        self::assertStringContainsString('weft_http_request_duration_seconds_bucket{le="+Inf"} 6', $text);
        self::assertStringContainsString('weft_requests_total 6', $text);
        self::assertStringContainsString('weft_workers{state="ready"} 2', $text);
        self::assertStringContainsString('weft_up 1', $text);
        self::assertMatchesRegularExpression('/^weft_worker_rss_bytes\{worker="1",pid="\d+",generation="1"\} [1-9]\d+$/m', $text);
        self::assertMatchesRegularExpression('/^weft_worker_memory_bytes\{worker="2",pid="\d+",generation="1"\} [1-9]\d+$/m', $text);
        self::assertMatchesRegularExpression('/^weft_worker_loop_lag_seconds\{worker="1",[^}]+\} \d/m', $text);
        self::assertMatchesRegularExpression('/^weft_worker_coroutines\{worker="1",[^}]+\} \d+$/m', $text);
        self::assertMatchesRegularExpression('/^weft_connections \d+$/m', $text);
        self::assertMatchesRegularExpression('/^weft_worker_restarts_total 0$/m', $text);
        self::assertMatchesRegularExpression('/^weft_reloads_total 0$/m', $text);
        self::promtool($text);

        // Counters survive a reload (the old workers' figures are kept) and count it.
        $server->control('reload');
        $text = ServerProcess::waitFor(static function () use ($metrics) {
            $text = self::get("$metrics/metrics")[2];
            return \str_contains($text, 'weft_reloads_total 1') && \str_contains($text, 'weft_workers{state="draining"} 0') ? $text : null;
        }, 20, 'the reload in /metrics');
        self::assertStringContainsString('weft_http_responses_total{code="2xx"} 3', $text);
        self::assertStringContainsString('weft_http_request_duration_seconds_count 6', $text);
        self::assertMatchesRegularExpression('/generation="2"/', $text);
        self::promtool($text);

        [$status] = self::get("$metrics/nothing");
        self::assertSame(404, $status);
        $server->stop();
    }

    public function testHealthIs503WhileAWorkerStartsAndWhileDraining(): void
    {
        $gate = \sys_get_temp_dir() . '/weft-gate-' . \bin2hex(\random_bytes(4));
        $server = new ServerProcess([self::APP, '--workers', '2', '--metrics', '127.0.0.1:0', '--grace', '10'], ['WEFT_TEST_BOOT_GATE' => $gate]);
        $metrics = self::metricsAddress($server);
        self::assertSame(200, self::get("$metrics/health")[0]);

        // A crashed worker's replacement boots behind the gate: the server is short of a ready worker.
        \touch($gate);
        try {
            \posix_kill($server->workerPids()[0], \SIGKILL);
            // First "short of workers" (the dead one is gone), then "starting" (its replacement boots).
            [$status, $headers, $body] = ServerProcess::waitFor(static function () use ($metrics) {
                $r = self::get("$metrics/health");
                return $r[0] === 503 && \json_decode($r[2], true)['reason'] === 'starting' ? $r : null;
            }, 10, '/health to turn 503 (starting)');
            self::assertSame(['status' => 'unavailable', 'reason' => 'starting', 'ready_workers' => 1, 'workers' => 2], \json_decode($body, true));
            self::assertSame('1', $headers['retry-after']);
            self::assertStringContainsString('weft_up 0', self::get("$metrics/metrics")[2]);
        } finally {
            @\unlink($gate);
        }
        ServerProcess::waitFor(static fn () => self::get("$metrics/health")[0] === 200, 10, '/health back to 200');

        // Stopping with a request in flight: the master drains, and says so.
        $slow = \stream_socket_client("tcp://{$server->address()}");
        \fwrite($slow, "GET /sleep?s=3 HTTP/1.1\r\nHost: t\r\n\r\n");
        ServerProcess::waitFor(static fn () => \str_contains(self::get("$metrics/metrics")[2], 'weft_connections 1'), 10, 'the slow request to be counted');
        \posix_kill($server->masterPid(), \SIGTERM);
        [, , $body] = ServerProcess::waitFor(static function () use ($metrics) {
            $r = self::get("$metrics/health");
            return $r[0] === 503 ? $r : null;
        }, 5, '/health to turn 503 while draining');
        self::assertSame('draining', \json_decode($body, true)['reason']);
        self::assertStringContainsString('slept', (string) \stream_get_contents($slow));
        $server->stop();
    }

    public function testDurationsLandInTheirBucketsAndABusyHandlerShowsAsLoopLag(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--metrics', '127.0.0.1:0']);
        $metrics = self::metricsAddress($server);
        self::assertSame('slept', self::get("http://{$server->address()}/sleep?s=0.3")[2]);
        $text = ServerProcess::waitFor(static function () use ($metrics) {
            $text = self::get("$metrics/metrics")[2];
            return \str_contains($text, 'weft_http_request_duration_seconds_count 1') ? $text : null;
        }, 10, 'the slow request in /metrics');
        self::assertStringContainsString('weft_http_request_duration_seconds_bucket{le="0.25"} 0', $text);
        self::assertStringContainsString('weft_http_request_duration_seconds_bucket{le="10"} 1', $text);
        self::assertMatchesRegularExpression('/^weft_http_request_duration_seconds_sum 0\.[3-9]/m', $text);

        // A sleep suspends only its request; a busy loop stalls the worker's loop, and that is the lag.
        self::assertSame('busy', self::get("http://{$server->address()}/busy?ms=600")[2]);
        $lag = ServerProcess::waitFor(static function () use ($metrics) {
            \preg_match('/^weft_worker_loop_lag_seconds\{[^}]*\} ([\d.]+)$/m', self::get("$metrics/metrics")[2], $m);
            return isset($m[1]) && (float) $m[1] >= 0.3 ? (float) $m[1] : null;
        }, 10, 'the loop lag of the busy handler');
        self::assertLessThan(30.0, $lag);
        \preg_match('/^weft_loop_lag_seconds_total ([\d.]+)$/m', self::get("$metrics/metrics")[2], $m);
        self::assertGreaterThanOrEqual(0.3, (float) $m[1], 'the stall is counted for good');
        $server->stop();
    }

    public function testAPrometheusServerScrapesIt(): void
    {
        self::assertTrue(\is_executable('/usr/bin/prometheus'), 'prometheus is missing: run scripts/setup.sh (Debian package prometheus)');
        $server = new ServerProcess([self::APP, '--workers', '1', '--metrics', '127.0.0.1:0']);
        $target = \substr(self::metricsAddress($server), 7);
        self::get("http://{$server->address()}/");
        $dir = \sys_get_temp_dir() . '/weft-prometheus-' . \bin2hex(\random_bytes(4));
        \mkdir($dir);
        \file_put_contents("$dir/prometheus.yml", "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: weft\n    static_configs: [{ targets: ['$target'] }]\n");
        $socket = \stream_socket_server('tcp://127.0.0.1:0');
        $web = \stream_socket_get_name($socket, false);
        \fclose($socket);
        $prometheus = \proc_open(['/usr/bin/prometheus', "--config.file=$dir/prometheus.yml", "--storage.tsdb.path=$dir/data", "--web.listen-address=$web"], [0 => ['file', '/dev/null', 'r'], 1 => ['file', "$dir/log", 'w'], 2 => ['file', "$dir/log", 'w']], $pipes);
        try {
            $query = static function (string $promql) use ($web): ?array {
                $reply = @\file_get_contents("http://$web/api/v1/query?query=" . \rawurlencode($promql));
                return $reply === false ? null : (\json_decode($reply, true)['data']['result'][0] ?? null);
            };
            $up = ServerProcess::waitFor(static fn () => $query('up{job="weft"}'), 30, 'a scrape by Prometheus');
            self::assertSame('1', $up['value'][1], 'Prometheus reached and parsed /metrics');
            $responses = ServerProcess::waitFor(static fn () => $query('weft_http_responses_total{code="2xx"} > 0'), 30, 'the request in Prometheus');
            self::assertSame('1', $responses['value'][1]);
            $targets = \json_decode((string) \file_get_contents("http://$web/api/v1/targets"), true);
            self::assertSame('', $targets['data']['activeTargets'][0]['lastError']);
        } finally {
            \proc_terminate($prometheus);
            ServerProcess::waitFor(static fn () => !\proc_get_status($prometheus)['running'], 20, 'prometheus to exit');
            \proc_close($prometheus);
            \exec('rm -rf ' . \escapeshellarg($dir));
            $server->stop();
        }
    }

    public function testABusyMetricsPortIsAStartError(): void
    {
        $blocker = \stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) \substr((string) \stream_socket_get_name($blocker, false), 10);
        [$code, $out] = ServerProcess::cli(['serve', self::APP, '--port', '0', '--metrics', "127.0.0.1:$port"]);
        self::assertSame(1, $code);
        self::assertStringContainsString("cannot listen for --metrics on 127.0.0.1:$port", $out);

        foreach (['nonsense', '127.0.0.1:99999', ':9100'] as $bad) {
            [$code, $out] = ServerProcess::cli(['serve', self::APP, '--port', '0', '--metrics', $bad]);
            self::assertSame(2, $code, $out);
            self::assertStringContainsString("option '--metrics' expects HOST:PORT (like 127.0.0.1:9100), got '$bad'", $out);
        }
        [$code, $out] = ServerProcess::cli(['serve', self::APP, '--mode', 'fpm', '--metrics', '127.0.0.1:0']);
        self::assertSame(2, $code, $out);
        self::assertStringContainsString("option '--metrics' is not available in fpm mode", $out);
    }

    public function testSyncWorkersAreNotReplacedBetweenShortConnections(): void
    {
        // One request per connection, one after another: after each accept a sync worker pauses its
        // accepting for a moment, and a worker whose loop had nothing else left used to exit and be
        // replaced (weft_worker_restarts_total rose by one every few requests).
        $server = new ServerProcess([self::APP, '--mode', 'sync', '--workers', '2', '--metrics', '127.0.0.1:0']);
        $metrics = self::metricsAddress($server);
        $workers = $server->workerPids();
        for ($i = 0; $i < 40; $i++) {
            self::assertSame('Hello World', self::get("http://{$server->address()}/")[2]);
        }
        $text = ServerProcess::waitFor(static fn () => \str_contains($t = self::get("$metrics/metrics")[2], 'weft_requests_total 40') ? $t : null, 10, 'the 40 requests in /metrics');
        self::assertStringContainsString("\nweft_worker_restarts_total 0\n", $text);
        self::assertSame($workers, $server->workerPids());
        self::assertStringNotContainsString('restarting', $server->output());
        $server->stop();
    }

    public function testHealthStaysOkThroughARollingReload(): void
    {
        $gate = \sys_get_temp_dir() . '/weft-gate-' . \bin2hex(\random_bytes(4));
        $server = new ServerProcess([self::APP, '--workers', '2', '--metrics', '127.0.0.1:0'], ['WEFT_TEST_BOOT_GATE' => $gate]);
        $metrics = self::metricsAddress($server);
        \touch($gate);
        $reload = null;
        try {
            // The new generation boots behind the gate while the old one serves.
            $reload = \proc_open([\PHP_BINARY, __DIR__ . '/../../../bin/weft', 'reload', '--pid-file', $server->pidFile], [1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes);
            ServerProcess::waitFor(static fn () => \str_contains(self::get("$metrics/metrics")[2], 'weft_workers{state="starting"} 2'), 20, 'two new workers starting');
            [$status, , $body] = self::get("$metrics/health");
            self::assertSame(200, $status, $body);
            self::assertSame(['status' => 'ok', 'reason' => 'ok', 'ready_workers' => 2, 'workers' => 2], \json_decode($body, true));
            self::assertSame('Hello World', self::get("http://{$server->address()}/")[2]);
        } finally {
            @\unlink($gate);
            if ($reload !== null) {
                self::assertSame(0, \proc_close($reload), 'the reload succeeds once the gate opens');
            }
        }
        $text = ServerProcess::waitFor(static fn () => \str_contains($t = self::get("$metrics/metrics")[2], 'weft_workers{state="draining"} 0') && \str_contains($t, 'weft_reloads_total 1') ? $t : null, 20, 'the reload done');
        self::assertStringContainsString('weft_up 1', $text);
        self::assertSame(200, self::get("$metrics/health")[0]);
        $server->stop();
    }

    public function testSlowOrManyClientsCannotHoldTheMastersDescriptors(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--metrics', '127.0.0.1:0']);
        $address = \substr(self::metricsAddress($server), 7);

        // A head trickled a line every second: the 5 s cover the whole request, not each read.
        $slow = \stream_socket_client("tcp://$address", $errno, $error, 5);
        self::assertNotFalse($slow, $error);
        \fwrite($slow, "GET /metrics HTTP/1.1\r\n");
        \stream_set_blocking($slow, false);
        $closed = false;
        for ($i = 0; $i < 30 && !$closed; $i++) {
            \usleep(1_000_000);
            @\fwrite($slow, "X-Slow-$i: y\r\n");
            $read = [$slow];
            $write = $except = null;
            $closed = \stream_select($read, $write, $except, 0) === 1 && \fread($slow, 100) === '';
        }
        \fclose($slow);
        self::assertTrue($closed, 'a trickling client is cut off well before 30 s');

        // Idle connections beyond the cap are closed unanswered; the port serves again once they go.
        $idle = [];
        for ($i = 0; $i < 64; $i++) {
            $idle[] = \stream_socket_client("tcp://$address", $errno, $error, 5);
        }
        [$status] = self::get("http://$address/health");
        self::assertSame(0, $status, 'the 65th connection gets no answer');
        foreach ($idle as $socket) {
            \fclose($socket);
        }
        $status = ServerProcess::waitFor(static fn () => self::get("http://$address/health")[0] ?: null, 10, 'an answer once the idle clients left');
        self::assertSame(200, $status);
        $server->stop();
    }

    private static function metricsAddress(ServerProcess $server): string
    {
        $line = ServerProcess::waitFor(static fn () => \preg_match('#Metrics on http://([\d.]+:\d+)/metrics#', $server->output(), $m) ? $m[1] : null, 10, 'the metrics address in the log');
        return "http://$line";
    }

    /** @return array{int, array<string, string>, string} */
    public static function get(string $url): array
    {
        $body = @\file_get_contents($url, false, \stream_context_create(['http' => ['ignore_errors' => true, 'timeout' => 5, 'follow_location' => 0]]));
        $status = 0;
        $headers = [];
        foreach ($http_response_header ?? [] as $i => $line) {
            if ($i === 0) {
                $status = (int) (\explode(' ', $line)[1] ?? 0);
            } elseif (\str_contains($line, ':')) {
                [$name, $value] = \explode(':', $line, 2);
                $headers[\strtolower($name)] = \trim($value);
            }
        }
        return [$status, $headers, (string) $body];
    }

    private static function promtool(string $text): void
    {
        self::assertTrue(\is_executable('/usr/bin/promtool'), 'promtool is missing: run scripts/setup.sh (Debian package prometheus)');
        $process = \proc_open(['/usr/bin/promtool', 'check', 'metrics'], [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['redirect', 1]], $pipes);
        \fwrite($pipes[0], $text);
        \fclose($pipes[0]);
        $out = (string) \stream_get_contents($pipes[1]);
        self::assertSame(0, \proc_close($process), "promtool check metrics:\n$out");
        self::assertSame('', \trim($out), "promtool lint:\n$out");
    }
}
