<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Ops;

use PHPUnit\Framework\TestCase;
use Weft\Tests\Support\Curl;
use Weft\Tests\Support\ServerProcess;

/**
 * What a worker reports about itself, read from a real server: its own memory (not the master's, not 0
 * under --daemon), its own /proc/self for the application, sub-millisecond latency buckets.
 */
final class WorkerFiguresTest extends TestCase
{
    private const APP = __DIR__ . '/fixtures/ops-app.php';
    /** Held by the worker: far above what the master holds (~20-40 MB), so the two cannot be confused. */
    private const HELD_MB = 96;

    public function testAWorkersRssIsItsOwnInStatusAndMetrics(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--memory-limit', '512M', '--metrics', '127.0.0.1:0']);
        $metrics = 'http://' . ServerProcess::waitFor(static fn () => \preg_match('#Metrics on http://([\d.]+:\d+)/metrics#', $server->output(), $m) ? $m[1] : null, 10, 'the metrics address');
        $pid = (int) Curl::get("http://{$server->address()}/hold?mb=" . self::HELD_MB)['body'];
        self::assertGreaterThan(0, $pid);

        $rss = ServerProcess::waitFor(static function () use ($server) {
            $rss = (int) ($server->status()['workers'][0]['rss'] ?? 0);
            return $rss > self::HELD_MB << 20 ? $rss : null;
        }, 10, "the worker's rss in status to include what it holds");
        self::assertLessThan(2 * (self::HELD_MB << 20) + (200 << 20), $rss);
        $text = ServerProcess::waitFor(static function () use ($metrics, $pid) {
            $text = MetricsTest::get("$metrics/metrics")[2];
            return \preg_match('/^weft_worker_rss_bytes\{worker="1",pid="' . $pid . '",generation="1"\} (\d+)$/m', $text, $m) && (int) $m[1] > self::HELD_MB << 20 ? $text : null;
        }, 10, 'weft_worker_rss_bytes to include what the worker holds');
        \preg_match('/^weft_master_rss_bytes (\d+)$/m', $text, $m);
        self::assertLessThan(self::HELD_MB << 20, (int) $m[1], "the master's own figure is not the worker's");

        // The application's own reads of /proc/self are the worker's too.
        [$own, $proc] = \explode(' ', Curl::get("http://{$server->address()}/proc-self")['body']);
        self::assertSame($own, $proc);
        $server->stop();
    }

    public function testTheLatencyHistogramHasSubMillisecondBuckets(): void
    {
        $server = new ServerProcess([self::APP, '--workers', '1', '--metrics', '127.0.0.1:0']);
        $metrics = 'http://' . ServerProcess::waitFor(static fn () => \preg_match('#Metrics on http://([\d.]+:\d+)/metrics#', $server->output(), $m) ? $m[1] : null, 10, 'the metrics address');
        for ($i = 0; $i < 20; $i++) {
            self::assertSame('Hello World', Curl::get("http://{$server->address()}/")['body']);
        }
        $text = ServerProcess::waitFor(static function () use ($metrics) {
            $text = MetricsTest::get("$metrics/metrics")[2];
            return \str_contains($text, 'weft_http_request_duration_seconds_count 20') ? $text : null;
        }, 10, 'the requests in /metrics');
        \preg_match_all('/^weft_http_request_duration_seconds_bucket\{le="([^"]+)"\} (\d+)$/m', $text, $m);
        self::assertSame(['0.0001', '0.00025', '0.0005', '0.001', '0.0025'], \array_slice($m[1], 0, 5));
        $counts = \array_map('intval', $m[2]);
        $sorted = $counts;
        \sort($sorted);
        self::assertSame($sorted, $counts, 'cumulative');
        self::assertSame(20, \end($counts));
        $server->stop();
    }

    public function testUnderDaemonTheRssIsNotZeroAndProcSelfIsTheWorkers(): void
    {
        $dir = \sys_get_temp_dir() . '/weft-figures-' . \bin2hex(\random_bytes(4));
        \mkdir($dir, 0700);
        $pidFile = "$dir/weft.pid";
        [$code, $out] = ServerProcess::cli(['serve', self::APP, '--daemon', '--port', '0', '--workers', '1', '--memory-limit', '512M', '--pid-file', $pidFile, '--log-file', "$dir/weft.log"]);
        self::assertSame(0, $code, $out);
        \preg_match('/127\.0\.0\.1:(\d+)/', $out, $m);
        $address = '127.0.0.1:' . $m[1];
        try {
            Curl::get("http://$address/hold?mb=" . self::HELD_MB);
            ServerProcess::waitFor(static function () use ($pidFile) {
                [$code, $out] = ServerProcess::cli(['status', '--json', '--pid-file', $pidFile]);
                $rss = $code === 0 ? (int) (\json_decode($out, true)['workers'][0]['rss'] ?? 0) : 0;
                return $rss > self::HELD_MB << 20;
            }, 10, "the daemon worker's rss in status");
            [$own, $proc] = \explode(' ', Curl::get("http://$address/proc-self")['body']);
            self::assertSame($own, $proc);
            $log = (string) \file_get_contents("$dir/weft.log");
            // The first line is the master's, after the fork: the pid the rest of the log (and the pid file) names.
            \preg_match('/^\S+ \[master (\d+)\]/', $log, $first);
            self::assertSame(\trim((string) \file_get_contents($pidFile)), $first[1] ?? null, $log);
        } finally {
            ServerProcess::cli(['stop', '--pid-file', $pidFile]);
            \exec('rm -rf ' . \escapeshellarg($dir));
        }
    }
}
