<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Observe;

use PHPUnit\Framework\TestCase;
use Weft\Observe\Health;
use Weft\Observe\Prometheus;
use Weft\Observe\RequestMetrics;

final class PrometheusTest extends TestCase
{
    public function testTotalsKeepTheFiguresOfRetiredWorkers(): void
    {
        $prometheus = new Prometheus();
        $worker = self::worker(1, 101, ['2xx' => 5, '5xx' => 1], [0, 0, 0, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 6);
        $prometheus->retire($worker);
        $text = $prometheus->render(self::serverStatus([self::worker(1, 102, ['2xx' => 2], [0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 2)]));
        self::assertStringContainsString('weft_http_responses_total{code="2xx"} 7', $text);
        self::assertStringContainsString('weft_http_responses_total{code="5xx"} 1', $text);
        self::assertStringContainsString('weft_http_request_duration_seconds_bucket{le="0.0005"} 0', $text);
        self::assertStringContainsString('weft_http_request_duration_seconds_bucket{le="0.001"} 6', $text);
        self::assertStringContainsString('weft_http_request_duration_seconds_bucket{le="0.0025"} 8', $text);
        self::assertStringContainsString('weft_http_request_duration_seconds_bucket{le="+Inf"} 8', $text);
        self::assertStringContainsString('weft_http_request_duration_seconds_count 8', $text);
        self::assertStringContainsString('weft_requests_total 8', $text);
        self::assertStringContainsString('weft_worker_rss_bytes{worker="1",pid="102",generation="1"} 1000', $text);
        // Every sample line belongs to a family announced by HELP and TYPE.
        $families = [];
        foreach (\explode("\n", \trim($text)) as $line) {
            if (\preg_match('/^# TYPE (\w+) (counter|gauge|histogram)$/', $line, $m)) {
                $families[$m[1]] = $m[2];
            } elseif (!\str_starts_with($line, '# HELP ')) {
                self::assertMatchesRegularExpression('/^(\w+?)(_bucket|_sum|_count)?(\{[^}]*\})? -?[\d.]+(e[+-]?\d+)?$|^\w+_bucket\{le="\+Inf"\} \d+$/', $line);
                \preg_match('/^(\w+)/', $line, $m);
                $name = \preg_replace('/_(bucket|sum|count)$/', '', $m[1]);
                self::assertArrayHasKey(isset($families[$m[1]]) ? $m[1] : $name, $families, $line);
            }
        }
    }

    public function testHealth(): void
    {
        self::assertTrue(Health::check(self::serverStatus([self::worker(1, 1), self::worker(2, 2)], 2))->healthy);
        $short = Health::check(self::serverStatus([self::worker(1, 1)], 2));
        self::assertSame([false, 'short of workers'], [$short->healthy, $short->reason]);
        $starting = Health::check(self::serverStatus([self::worker(1, 1), ['state' => 'starting'] + self::worker(2, 2)], 2));
        self::assertSame('starting', $starting->reason);
        $stopping = self::serverStatus([self::worker(1, 1)], 1);
        $stopping['master']['state'] = 'stopping';
        self::assertSame('draining', Health::check($stopping)->reason);
        // A reload: the old generation serves while the new one starts.
        $reload = self::serverStatus([self::worker(1, 1), ['state' => 'starting', 'generation' => 2] + self::worker(1, 3)], 1);
        self::assertTrue(Health::check($reload)->healthy);
    }

    private static function serverStatus(array $workers, int $configured = 1): array
    {
        return ['master' => ['workers' => $configured, 'uptime' => 3.5, 'rss' => 2000, 'restarts' => 1, 'reloads' => 0, 'state' => 'running'], 'workers' => $workers];
    }

    public function testResponsesAreCountedByProtocol(): void
    {
        $metrics = new RequestMetrics();
        $metrics->record(200, 0.001);
        $metrics->record(200, 0.001, 'HTTP/2.0');
        $metrics->record(404, 0.001, 'HTTP/2.0');
        $prometheus = new Prometheus();
        $prometheus->retire(['protocols' => ['HTTP/2.0' => 5]]);
        $text = $prometheus->render(self::serverStatus([self::worker(1, 102) + $metrics->snapshot()]));
        self::assertStringContainsString('weft_http_responses_by_protocol_total{protocol="HTTP/1.1"} 1', $text);
        self::assertStringContainsString('weft_http_responses_by_protocol_total{protocol="HTTP/2.0"} 7', $text);
    }

    public function testFrameworkInstancesArePerWorkerWhenAWorkerReportsThem(): void
    {
        $plain = (new Prometheus())->render(self::serverStatus([self::worker(1, 101)]));
        self::assertStringNotContainsString('weft_worker_app_instances', $plain, 'no bridge, no family');
        $text = (new Prometheus())->render(self::serverStatus([self::worker(1, 101) + ['app_instances' => 3], self::worker(2, 102) + ['app_instances' => 1]]));
        self::assertStringContainsString("# TYPE weft_worker_app_instances gauge\n", $text);
        self::assertStringContainsString('weft_worker_app_instances{worker="1",pid="101",generation="1"} 3', $text);
        self::assertStringContainsString('weft_worker_app_instances{worker="2",pid="102",generation="1"} 1', $text);
    }

    private static function worker(int $slot, int $pid, array $statuses = [], array $buckets = [], int $count = 0): array
    {
        $buckets = $buckets ?: \array_fill(0, \count(RequestMetrics::BUCKETS) + 1, 0);
        return [
            'slot' => $slot, 'pid' => $pid, 'generation' => 1, 'state' => 'ready', 'requests' => $count,
            'connections' => 0, 'coroutines' => 1, 'memory' => 500, 'rss' => 1000, 'loop_lag' => 0.001,
            'statuses' => $statuses + ['1xx' => 0, '2xx' => 0, '3xx' => 0, '4xx' => 0, '5xx' => 0],
            'duration' => ['buckets' => $buckets, 'count' => $count, 'sum' => 0.01 * $count],
        ];
    }
}
