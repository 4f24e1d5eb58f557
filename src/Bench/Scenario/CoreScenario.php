<?php

declare(strict_types=1);

namespace Weft\Bench\Scenario;

use Weft\Bench\Environment;
use Weft\Bench\Load\Measurement;
use Weft\Bench\Process\Service;
use Weft\Bench\Process\ServiceFailed;
use Weft\Bench\Report\Check;
use Weft\Bench\Report\Column;
use Weft\Bench\Report\Format;
use Weft\Bench\Row;

/**
 * The core micro benchmarks with their targets: coroutine spawn cost, many sleeping coroutines,
 * channel ping-pong, TCP echo, and the client benchmarks (MySQL, Redis, a slow upstream). Every one
 * runs in fresh child processes with the same PHP flags as the servers; pass/fail is computed.
 */
final class CoreScenario extends AbstractScenario
{
    /** benchmark => [title, unit, comparison, target] (comparison null: no target set) */
    private const BENCHMARKS = [
        'spawn' => ['spawn + finish of 1,000,000 short coroutines (median batch)', 'µs/coroutine', '<=', 1.5],
        'sleep-wall' => ['10,000 coroutines each sleeping 1 s at once: wall time', 's', '<=', 1.3],
        'sleep-rss' => ['10,000 coroutines each sleeping 1 s at once: peak RSS of the process', 'MB', '<=', 150.0],
        'pingpong' => ['channel ping-pong between two coroutines', 'messages/s', '>=', 1_000_000.0],
        'tcp-echo' => ['TCP echo over loopback, 100 connections, one coroutine each (server and client processes)', 'messages/s', null, null],
        'mysql' => ['MySQL point selects (Weft\Bench\Client\MysqlPointSelect)', 'queries/s', null, null],
        'redis' => ['Redis commands (Weft\Bench\Client\RedisBench)', 'ops/s', null, null],
        'hook-pdo' => ['hook overhead: PDO point selects in one coroutine, hooks on / hooks off (queries/s, median of interleaved rounds)', 'x', '>=', 0.9],
        'hook-redis' => ['hook overhead: phpredis GET in one coroutine, hooks on / hooks off (ops/s, median of interleaved rounds)', 'x', '>=', 0.9],
        'upstream' => ['upstream with a 1 s delay, 100 connections, coroutine mode, 2 workers', 'req/s', '>=', 95.0],
    ];

    /** @var array<string, array<string, mixed>> child results shared by rows (both sleep rows come from one run) */
    private array $cache = [];

    public function name(): string
    {
        return 'core';
    }

    public function title(): string
    {
        return 'core — micro benchmarks of the coroutine core and the clients';
    }

    public function description(): string
    {
        return 'Each benchmark runs in a fresh child process started like the servers (opcache and JIT on). The coroutine '
            . 'benchmarks run on the server CPU; TCP echo and the upstream benchmark have their server on the server CPU and their '
            . 'client on the load CPU; the MySQL and Redis client benchmarks run on the load CPU against the (unpinned) test services. '
            . 'Pass/fail compares the measured figure with the target; a benchmark without a target has no verdict.';
    }

    public function rows(Environment $env): array
    {
        $rows = [];
        foreach (\array_keys(self::BENCHMARKS) as $name) {
            $row = new Row($this->name(), ['benchmark' => $name]);
            $reason = match ($name) {
                'mysql' => \class_exists('Weft\\Bench\\Client\\MysqlPointSelect') ? self::unreachable(self::mysqlUrl(), 'MariaDB') : 'not available',
                'redis' => \class_exists('Weft\\Bench\\Client\\RedisBench') ? self::unreachable(self::redisUrl(), 'Redis') : 'not available',
                'upstream' => self::missingFiles($env, ['upstream.php', 'delay-server.php']),
                'hook-pdo' => $env->extensionPath() === null ? 'the hooks need the weft extension (bash scripts/build-ext.sh)'
                    : (\extension_loaded('pdo_mysql') ? self::unreachable(self::mysqlUrl(), 'MariaDB') : 'pdo_mysql is not loaded'),
                'hook-redis' => $env->extensionPath() === null ? 'the hooks need the weft extension (bash scripts/build-ext.sh)'
                    : (\extension_loaded('redis') ? self::unreachable(self::redisUrl(), 'Redis') : 'phpredis is not loaded (Debian: php8.2-redis)'),
                default => null,
            };
            if ($reason !== null) {
                $row->skip($reason);
            }
            $rows[] = $row;
        }
        return $rows;
    }

    public function estimate(Row $row): float
    {
        if ($row->status !== Row::PENDING) {
            return 0.0;
        }
        $quick = $this->settings->quick;
        return match ($row->param('benchmark')) {
            'spawn' => $quick ? 5.0 : 12.0,
            'sleep-wall' => 2.0,
            'sleep-rss' => 0.0,
            'pingpong' => $quick ? 2.0 : 6.0,
            'tcp-echo', 'mysql', 'redis' => $this->seconds() + 1.0,
            'hook-pdo', 'hook-redis' => $quick ? 3.0 : 8.0,
            'upstream' => $this->upstreamRequests() + 2.0,
            default => 1.0,
        };
    }

    private function seconds(): float
    {
        return $this->settings->duration ?? ($this->settings->quick ? 2.0 : 5.0);
    }

    private function upstreamRequests(): int
    {
        return $this->settings->quick ? 3 : 10;
    }

    public function run(Row $row, Environment $env): void
    {
        $name = (string) $row->param('benchmark');
        [, $unit, $op, $target] = self::BENCHMARKS[$name];
        $detail = null;
        switch ($name) {
            case 'spawn':
                $r = $this->child($env, ['_core', 'spawn', '--batches', $this->settings->quick ? '3' : '7'], 120);
                $value = $r['us_per_coroutine'];
                $detail = \sprintf('%d batches of %s: %s s', $r['batches'], \number_format($r['coroutines']), \implode(' / ', \array_map(static fn ($s) => \number_format($s, 2), $r['batch_seconds'])));
                break;
            case 'sleep-wall':
            case 'sleep-rss':
                $r = $this->cache['sleep'] ??= $this->child($env, ['_core', 'sleepers'], 60);
                $value = $name === 'sleep-wall' ? $r['wall_seconds'] : $r['peak_rss_bytes'] / 1048576;
                $detail = $name === 'sleep-rss' ? 'VmHWM of the child; PHP allocator peak (reserved, not all touched) ' . Format::bytes($r['peak_php_memory_bytes']) : null;
                break;
            case 'pingpong':
                $r = $this->child($env, ['_core', 'pingpong', '--count', $this->settings->quick ? '500000' : '2000000'], 120);
                $value = $r['messages_per_second'];
                $detail = \number_format($r['messages']) . ' messages in ' . \number_format($r['seconds'], 2) . ' s';
                break;
            case 'tcp-echo':
                [$value, $detail] = $this->tcpEcho($row, $env);
                break;
            case 'mysql':
            case 'redis':
                $r = $this->child($env, ['_client', $name, '--url', $name === 'mysql' ? self::mysqlUrl() : self::redisUrl(), '--duration', (string) $this->seconds()], $this->seconds() * 3 + 30, false);
                [$value, $key] = self::primaryRate($r);
                $row->metrics['figures'] = $r;
                $detail = ($key !== null ? "$key; " : '') . self::compact($r, $key);
                break;
            case 'hook-pdo':
            case 'hook-redis':
                // On the load CPU like the other client benchmarks (the services are not pinned).
                $queries = $this->settings->quick ? 1_000 : 2_000;
                $rounds = $this->settings->quick ? 12 : 20;
                $r = $this->child($env, ['_core', $name, '--url', $name === 'hook-pdo' ? self::mysqlUrl() : self::redisUrl(), '--count', (string) $queries, '--batches', (string) $rounds], 180, false);
                $value = $r['ratio'];
                $row->metrics['figures'] = $r;
                $detail = \sprintf(
                    'median of %d back-to-back rounds of %s per side (one coroutine, a fresh connection per round), rounds %.2f–%.2f x; all rounds: hooks on %s/s, hooks off %s/s; client CPU %.1f µs/query on, %.1f off',
                    $r['rounds'],
                    \number_format($queries),
                    \min($r['round_ratios']),
                    \max($r['round_ratios']),
                    Format::rate($r['hooks_on_qps']),
                    Format::rate($r['hooks_off_qps']),
                    $r['cpu_us_per_query_on'],
                    $r['cpu_us_per_query_off'],
                );
                break;
            case 'upstream':
                [$value, $detail] = $this->upstream($row, $env);
                if ($value === null) {
                    return;
                }
                break;
            default:
                throw new \LogicException("Unknown core benchmark $name");
        }
        $row->metrics['value'] = $value === null ? null : \round((float) $value, 4);
        $row->metrics['unit'] = $unit;
        $row->metrics['target'] = $target;
        $row->metrics['comparison'] = $op;
        $row->metrics['pass'] = $op === null || $value === null ? null : ($op === '<=' ? $value <= $target : $value >= $target);
        if ($detail !== null) {
            $row->notes[] = $detail;
        }
        $row->status = Row::OK;
    }

    /** @return array{0: float, 1: string} */
    private function tcpEcho(Row $row, Environment $env): array
    {
        $server = Service::start(
            $env->processes,
            [...$env->serverPrefix(), $env->php(), ...$env->phpFlags(), $env->weftBin(), 'bench', '_echo-server', '--port', (string) $env->port()],
            $env->logBase('core-echo-server'),
        );
        try {
            $seconds = $this->seconds();
            $run = Measurement::run($env, $server->pid(), [$env->php(), ...$env->phpFlags(), $env->weftBin(), 'bench', '_echo-client', '--port', (string) $server->port, '--connections', '100', '--duration', (string) $seconds], 'core-echo-client', $seconds + 30);
            $r = self::json($run['output']);
            $row->metrics['errors'] = $r['errors'];
            $row->metrics['cpu_pct'] = $run['usage']['cpu_pct'];
            $row->metrics['rss_bytes'] = $run['usage']['rss_bytes'];
            return [$r['messages_per_second'], \sprintf('%s messages of %d bytes; errors %s; echo server CPU %s %%, RSS %s', \number_format($r['messages']), \Weft\Bench\Core\EchoBench::MESSAGE_BYTES, Format::errors($r['errors']), Format::pct($run['usage']['cpu_pct']), Format::bytes($run['usage']['rss_bytes']))];
        } finally {
            $server->stop(2.0);
        }
    }

    /** @return array{0: ?float, 1: ?string} */
    private function upstream(Row $row, Environment $env): array
    {
        $delay = Service::start(
            $env->processes,
            [...$env->loadPrefix(), $env->php(), self::exampleFile($env, 'delay-server.php'), '--port', (string) $env->port(), '--delay', '1'],
            $env->logBase('core-delay-server'),
        );
        try {
            $loop = self::defaultLoops($env)[0];
            try {
                $server = $env->startWeft(self::exampleFile($env, 'upstream.php'), ['--mode', 'coroutine', '--workers', '2', '--loop', $loop], 'core-upstream', ['UPSTREAM_URL' => "http://127.0.0.1:{$delay->port}/"]);
            } catch (ServiceFailed $e) {
                $row->fail('server did not start: ' . $e->getMessage());
                return [null, null];
            }
            try {
                $requests = $this->upstreamRequests();
                $run = Measurement::run($env, $server->pid(), [$env->php(), ...$env->phpFlags(), $env->weftBin(), 'bench', '_http-load', '--port', (string) $server->port, '--connections', '100', '--requests', (string) $requests, '--timeout', '10'], 'core-upstream-load', $requests * 12 + 20);
                $r = self::json($run['output']);
                $row->metrics['errors'] = $r['errors'];
                $row->metrics['p99_ms'] = $r['p99_ms'];
                return [$r['requests_per_second'], \sprintf('%d connections x %d requests in %.2f s (bound 100 req/s), p99 %s ms, errors %s, %s loop', 100, $requests, $r['seconds'], Format::ms($r['p99_ms']), Format::errors($r['errors']), $loop)];
            } finally {
                $server->stop();
            }
        } finally {
            $delay->stop(2.0);
        }
    }

    /**
     * Runs `bin/weft bench ARGS` in a fresh process and returns the JSON it printed.
     *
     * @param list<string> $args
     * @return array<string, mixed>
     */
    private function child(Environment $env, array $args, float $timeout, bool $serverCpu = true): array
    {
        $base = $env->logBase('core-' . \implode('-', \array_slice($args, 0, 2)));
        $process = $env->processes->start([...($serverCpu ? $env->serverPrefix() : $env->loadPrefix()), $env->php(), ...$env->phpFlags(), $env->weftBin(), 'bench', ...$args], "$base.out", "$base.log");
        try {
            $finished = $process->wait($timeout, static function () use ($env, $process): void {
                if ($env->interrupted) {
                    $process->signalGroup(\SIGTERM);
                }
            });
            if ($env->interrupted) {
                throw new \RuntimeException('interrupted');
            }
            if (!$finished) {
                throw new \RuntimeException("did not finish within {$timeout} s");
            }
            if ($process->exitCode() !== 0) {
                throw new \RuntimeException('exit ' . $process->exitCode() . ': ' . $process->stderrTail(2));
            }
            return self::json($process->stdout());
        } finally {
            $process->terminate(0.5);
            $env->processes->forget($process);
        }
    }

    /** @return array<string, mixed> */
    private static function json(string $output): array
    {
        $lines = \array_values(\array_filter(\explode("\n", \trim($output))));
        $data = \json_decode((string) \end($lines), true);
        if (!\is_array($data)) {
            throw new \RuntimeException('unexpected output: ' . \substr(\trim($output), -200));
        }
        return $data;
    }

    /**
     * The headline figure of a client benchmark's result: the first rate it reports.
     *
     * @param array<string, mixed> $result
     * @return array{0: ?float, 1: ?string}
     */
    public static function primaryRate(array $result): array
    {
        foreach ($result as $key => $value) {
            if ((\is_int($value) || \is_float($value)) && \preg_match('/(_qps|_ops|per_s(ec(ond)?)?|_rps|_rate)$|^(qps|ops|rps)$/i', (string) $key)) {
                return [(float) $value, (string) $key];
            }
        }
        return [null, null];
    }

    /** @param array<string, mixed> $result */
    private static function compact(array $result, ?string $skip): string
    {
        $parts = [];
        foreach ($result as $key => $value) {
            if ($key === $skip || \is_array($value)) {
                continue;
            }
            $parts[] = "$key " . (\is_float($value) ? Format::rate($value) : (\is_bool($value) ? ($value ? 'yes' : 'no') : (string) $value));
        }
        return \implode(', ', $parts);
    }

    private static function mysqlUrl(): string
    {
        return (string) (\getenv('DATABASE_URL') ?: (\getenv('WEFT_TEST_MYSQL_URL') ?: 'mysql://weft:weft@127.0.0.1:13306/weft'));
    }

    private static function redisUrl(): string
    {
        return (string) (\getenv('WEFT_TEST_REDIS_URL') ?: 'redis://127.0.0.1:16379');
    }

    /**
     * Why a service at $url cannot be reached (a plain TCP connect), or null. The bench starts the
     * checkout's own throwaway services (scripts/services.sh) when they are down, once, and stops them
     * again when it exits.
     */
    public static function unreachable(string $url, string $what): ?string
    {
        $parts = \parse_url($url);
        $host = $parts['host'] ?? '127.0.0.1';
        $port = $parts['port'] ?? null;
        if ($port === null) {
            return null;
        }
        $error = self::connectError($host, (int) $port);
        if ($error !== null && self::startServices()) {
            $error = self::connectError($host, (int) $port);
        }
        return $error === null ? null : "$what not reachable at $host:$port ($error; bash scripts/services.sh start)";
    }

    private static function connectError(string $host, int $port): ?string
    {
        $socket = @\stream_socket_client("tcp://$host:$port", $errno, $error, 2.0);
        if ($socket === false) {
            return $error;
        }
        \fclose($socket);
        return null;
    }

    private static ?bool $servicesStarted = null;

    /** Starts MariaDB, PostgreSQL and Redis of this checkout, once per run. */
    private static function startServices(): bool
    {
        if (self::$servicesStarted !== null) {
            return self::$servicesStarted;
        }
        $script = \dirname(__DIR__, 3) . '/scripts/services.sh';
        if (!\is_file($script)) {
            return self::$servicesStarted = false;
        }
        \fwrite(\STDERR, "weft bench: starting the test services (scripts/services.sh start)\n");
        \exec('bash ' . \escapeshellarg($script) . ' start 2>&1', $output, $code);
        self::$servicesStarted = $code === 0;
        if (self::$servicesStarted) {
            \register_shutdown_function(static function () use ($script): void {
                \exec('bash ' . \escapeshellarg($script) . ' stop 2>&1');
            });
        }
        return self::$servicesStarted;
    }

    public function columns(): array
    {
        return [
            new Column('benchmark', static fn (Row $r): string => self::BENCHMARKS[$r->param('benchmark')][0] ?? (string) $r->param('benchmark'), false),
            new Column('result', static function (Row $r): string {
                $value = $r->number('value');
                return $value === null ? Format::NONE : (self::format($value) . ' ' . $r->metric('unit'));
            }),
            new Column('target', static function (Row $r): string {
                [, $unit, $op, $target] = self::BENCHMARKS[$r->param('benchmark')];
                return $op === null ? 'none set' : ($op === '<=' ? '≤ ' : '≥ ') . self::format((float) $target) . " $unit";
            }),
            new Column('pass', static fn (Row $r): string => match ($r->metric('pass')) {
                true => 'pass',
                false => 'FAIL',
                default => Format::NONE,
            }, false),
            Column::status(),
        ];
    }

    private static function format(float $value): string
    {
        return $value >= 1000 ? \number_format($value, 0, '.', ',') : \number_format($value, $value >= 100 ? 0 : 2, '.', ',');
    }

    public function findings(array $rows): array
    {
        $passed = [];
        $failed = [];
        $open = [];
        foreach ($rows as $row) {
            $name = self::BENCHMARKS[$row->param('benchmark')][0];
            match (true) {
                $row->metric('pass') === true => $passed[] = $name,
                $row->metric('pass') === false => $failed[] = \sprintf('%s (%s %s against %s)', $name, self::format((float) $row->number('value')), $row->metric('unit'), self::format((float) $row->metric('target'))),
                default => $open[] = $name . ($row->isOk() ? ' (no target)' : ' (' . $row->status . ')'),
            };
        }
        $out = [\sprintf('%d of %d targets met.', \count($passed), \count($passed) + \count($failed))];
        if ($failed !== []) {
            $out[] = 'Missed: ' . \implode('; ', $failed) . '.';
        }
        if ($open !== []) {
            $out[] = 'Without a verdict: ' . \implode('; ', $open) . '.';
        }
        return $out;
    }

    public function checks(array $rows): array
    {
        $checks = [];
        foreach ($rows as $row) {
            [$title, $unit, $op, $target] = self::BENCHMARKS[$row->param('benchmark')];
            if ($op === null) {
                continue;
            }
            $claim = "$title " . ($op === '<=' ? '≤ ' : '≥ ') . self::format((float) $target) . " $unit";
            $checks[] = $row->metric('pass') === null
                ? Check::unknown($claim, $row->isOk() ? 'no figure' : $row->status . ': ' . $row->reason)
                : new Check($claim, (bool) $row->metric('pass'), 'measured ' . self::format((float) $row->number('value')) . " $unit");
        }
        return $checks;
    }
}
