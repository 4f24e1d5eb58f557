<?php

declare(strict_types=1);

namespace Weft\Observe;

/**
 * The master's status (as `bin/weft status --json` shows it, with each worker's RequestMetrics) in the
 * Prometheus text exposition format 0.0.4.
 *
 * Totals must not go down when a worker is replaced (Prometheus would read it as a counter reset), so
 * the figures of workers that exited are kept in $retired and added to the live workers' sums.
 */
final class Prometheus
{
    public const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

    /** @var array<string, int> */
    private array $retiredStatuses = [];
    /** @var array<string, int> */
    private array $retiredProtocols = [];
    /** @var list<int> */
    private array $retiredBuckets = [];
    private int $retiredCount = 0;
    private float $retiredSum = 0.0;
    private int $retiredRequests = 0;
    private float $retiredLag = 0.0;

    /** @param array<string, mixed> $stats a worker's last report */
    public function retire(array $stats): void
    {
        foreach ($stats['statuses'] ?? [] as $class => $n) {
            $this->retiredStatuses[$class] = ($this->retiredStatuses[$class] ?? 0) + (int) $n;
        }
        foreach ($stats['protocols'] ?? [] as $protocol => $n) {
            $this->retiredProtocols[$protocol] = ($this->retiredProtocols[$protocol] ?? 0) + (int) $n;
        }
        foreach ($stats['duration']['buckets'] ?? [] as $i => $n) {
            $this->retiredBuckets[$i] = ($this->retiredBuckets[$i] ?? 0) + (int) $n;
        }
        $this->retiredCount += (int) ($stats['duration']['count'] ?? 0);
        $this->retiredSum += (float) ($stats['duration']['sum'] ?? 0.0);
        $this->retiredRequests += (int) ($stats['requests'] ?? 0);
        $this->retiredLag += (float) ($stats['loop_lag_total'] ?? 0.0);
    }

    /** @param array{master: array<string, mixed>, workers: list<array<string, mixed>>} $status */
    public function render(array $status): string
    {
        $master = $status['master'];
        $workers = $status['workers'];
        $out = [];

        $states = ['starting' => 0, 'ready' => 0, 'stuck' => 0, 'draining' => 0];
        foreach ($workers as $w) {
            $states[$w['state']] = ($states[$w['state']] ?? 0) + 1;
        }
        self::family($out, 'weft_up', 'gauge', 'Whether every configured worker is ready (1) or not (0).', [
            ['', Health::check($status)->healthy ? 1 : 0],
        ]);
        self::family($out, 'weft_workers_configured', 'gauge', 'Workers the server is configured to run.', [['', $master['workers']]]);
        self::family($out, 'weft_workers', 'gauge', 'Worker processes by state.', \array_map(
            static fn (string $state, int $n) => [self::labels(['state' => $state]), $n],
            \array_keys($states),
            $states,
        ));
        self::family($out, 'weft_uptime_seconds', 'gauge', 'Seconds since the master started.', [['', $master['uptime']]]);
        self::family($out, 'weft_master_rss_bytes', 'gauge', "The master process's resident memory.", [['', $master['rss']]]);
        self::family($out, 'weft_worker_restarts_total', 'counter', 'Workers replaced after they exited unexpectedly or were recycled.', [['', $master['restarts']]]);
        self::family($out, 'weft_reloads_total', 'counter', 'Completed rolling reloads.', [['', $master['reloads'] ?? 0]]);

        $statuses = $this->retiredStatuses + ['1xx' => 0, '2xx' => 0, '3xx' => 0, '4xx' => 0, '5xx' => 0];
        $protocols = $this->retiredProtocols;
        $buckets = \array_pad($this->retiredBuckets, \count(RequestMetrics::BUCKETS) + 1, 0);
        $count = $this->retiredCount;
        $sum = $this->retiredSum;
        $requests = $this->retiredRequests;
        $lag = $this->retiredLag;
        foreach ($workers as $w) {
            $lag += (float) ($w['loop_lag_total'] ?? 0.0);
            foreach ($w['statuses'] ?? [] as $class => $n) {
                $statuses[$class] = ($statuses[$class] ?? 0) + (int) $n;
            }
            foreach ($w['protocols'] ?? [] as $protocol => $n) {
                $protocols[$protocol] = ($protocols[$protocol] ?? 0) + (int) $n;
            }
            foreach ($w['duration']['buckets'] ?? [] as $i => $n) {
                $buckets[$i] = ($buckets[$i] ?? 0) + (int) $n;
            }
            $count += (int) ($w['duration']['count'] ?? 0);
            $sum += (float) ($w['duration']['sum'] ?? 0.0);
            $requests += (int) ($w['requests'] ?? 0);
        }
        \ksort($statuses);
        self::family($out, 'weft_requests_total', 'counter', 'Requests (HTTP) or lines (line protocol) the application was called for.', [['', $requests]]);
        self::family($out, 'weft_http_responses_total', 'counter', "The application's responses by status class.", \array_map(
            static fn (string $class, int $n) => [self::labels(['code' => $class]), $n],
            \array_keys($statuses),
            $statuses,
        ));
        \ksort($protocols);
        self::family($out, 'weft_http_responses_by_protocol_total', 'counter', "The application's responses by protocol (HTTP/1.1, HTTP/2.0).", \array_map(
            static fn (string $protocol, int $n) => [self::labels(['protocol' => $protocol]), $n],
            \array_keys($protocols),
            $protocols,
        ));
        $samples = [];
        $cumulative = 0;
        foreach (RequestMetrics::BUCKETS as $i => $bound) {
            $cumulative += $buckets[$i];
            $samples[] = ['_bucket' . self::labels(['le' => self::number($bound)]), $cumulative];
        }
        $cumulative += $buckets[\count(RequestMetrics::BUCKETS)];
        $samples[] = ['_bucket' . self::labels(['le' => '+Inf']), $cumulative];
        $samples[] = ['_sum', $sum];
        $samples[] = ['_count', $count];
        self::family($out, 'weft_loop_lag_seconds_total', 'counter', "Seconds the workers' event loops ran late (a handler computing without waiting), all workers.", [['', $lag]]);
        self::family($out, 'weft_http_request_duration_seconds', 'histogram', 'Seconds from the start of a request\'s handling to the last byte of its response (a streamed one included).', $samples);

        $perWorker = [
            ['weft_worker_connections', 'Open connections.', 'connections', false],
            ['weft_worker_coroutines', 'Live coroutines.', 'coroutines', false],
            ['weft_worker_memory_bytes', "PHP's allocated memory (memory_get_usage(true)).", 'memory', false],
            ['weft_worker_rss_bytes', 'Resident set size.', 'rss', false],
            ['weft_worker_loop_lag_seconds', 'Largest event loop lag in the last report interval (about 1 s).', 'loop_lag', false],
            ['weft_worker_requests', 'Requests served by this worker process so far.', 'requests', false],
            // Only workers that serve a framework through a bridge report it: no family without them.
            ['weft_worker_app_instances', 'Framework instances booted in this worker (Laravel and Symfony bridges; --app-instances is the most).', 'app_instances', true],
        ];
        $connections = 0;
        foreach ($workers as $w) {
            $connections += (int) ($w['connections'] ?? 0);
        }
        self::family($out, 'weft_connections', 'gauge', 'Open connections, all workers.', [['', $connections]]);
        foreach ($perWorker as [$name, $help, $key, $onlyReported]) {
            $samples = [];
            foreach ($workers as $w) {
                if (isset($w[$key])) {
                    $samples[] = [self::labels(['worker' => (string) $w['slot'], 'pid' => (string) $w['pid'], 'generation' => (string) $w['generation']]), $w[$key]];
                }
            }
            if ($samples === [] && $onlyReported) {
                continue;
            }
            self::family($out, $name, 'gauge', $help, $samples);
        }
        return \implode("\n", $out) . "\n";
    }

    /** @param list<string> $out @param list<array{string, int|float}> $samples */
    private static function family(array &$out, string $name, string $type, string $help, array $samples): void
    {
        $out[] = "# HELP $name " . \addcslashes($help, "\\\n");
        $out[] = "# TYPE $name $type";
        foreach ($samples as [$suffix, $value]) {
            // A suffix is either a label set "{...}" or "_bucket{...}" / "_sum" / "_count".
            $out[] = $name . $suffix . ' ' . self::number($value);
        }
    }

    /** @param array<string, string> $labels */
    private static function labels(array $labels): string
    {
        $parts = [];
        foreach ($labels as $key => $value) {
            $parts[] = $key . '="' . \str_replace(['\\', '"', "\n"], ['\\\\', '\\"', '\\n'], $value) . '"';
        }
        return '{' . \implode(',', $parts) . '}';
    }

    private static function number(int|float|string $value): string
    {
        if (\is_int($value)) {
            return (string) $value;
        }
        $value = (float) $value;
        if (\is_nan($value)) {
            return 'NaN';
        }
        if (\is_infinite($value)) {
            return $value > 0 ? '+Inf' : '-Inf';
        }
        // Enough digits to round-trip, without PHP's locale or exponent surprises.
        $text = \rtrim(\rtrim(\sprintf('%.9F', $value), '0'), '.');
        return $text === '' || $text === '-0' ? '0' : $text;
    }
}
