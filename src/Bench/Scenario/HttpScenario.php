<?php

declare(strict_types=1);

namespace Weft\Bench\Scenario;

use Weft\Bench\Environment;
use Weft\Bench\Load\AbParser;
use Weft\Bench\Load\Measurement;
use Weft\Bench\Load\Probe;
use Weft\Bench\Load\Wrk;
use Weft\Bench\Load\WrkParser;
use Weft\Bench\Process\Service;
use Weft\Bench\Process\ServicePin;
use Weft\Bench\Reference\Netty;
use Weft\Bench\Report\Findings;
use Weft\Bench\Report\Format;
use Weft\Bench\Row;
use Weft\Bench\Settings;
use Weft\Bench\Tools;

/**
 * The common shape of the HTTP scenarios: start the server for a row, check it answers correctly,
 * load it with wrk while sampling its processes, optionally repeat with ab -k, stop it.
 */
abstract class HttpScenario extends AbstractScenario
{
    /** Seconds of unmeasured load before a Netty row (half in --quick). */
    public const NETTY_WARM_UP = 2.0;

    /** @var array<string, string> mode => why its server can never start (the app does not load in it) */
    protected array $bootFailures = [];
    private ?ServicePin $database = null;

    /** Moves the database off the server's CPU (ServicePin) before the first row that uses it. */
    protected function pinDatabase(Environment $env): void
    {
        if ($this->database === null && $env->pinned()) {
            $this->database = ServicePin::toCpu('MariaDB', Sql3Scenario::url(), Environment::LOAD_CPU, $env->tools->path('taskset'));
        }
    }

    /** Where the database ran, for the report's notes. */
    protected function databaseNote(): string
    {
        return ($this->database?->note() ?? 'MariaDB was not pinned to a CPU') . '.';
    }

    public function finish(Environment $env): void
    {
        $this->database?->restore();
    }

    public function unavailable(Environment $env): ?string
    {
        return $env->tools->has('wrk') ? null : Tools::missing('wrk');
    }

    public function comparesBuilds(): bool
    {
        return true;
    }

    public function estimate(Row $row): float
    {
        $settings = $this->settings;
        if ($row->status !== Row::PENDING) {
            return 0.0;
        }
        $run = $settings->duration() + ($row->param('mode') === 'fpm' ? 2.0 : 0.8);
        return $settings->ab ? $run + $settings->duration() + 0.3 : $run;
    }

    /**
     * @return list<string> the serve options of a row's mode, workers and loop
     */
    protected static function serveArguments(Row $row): array
    {
        $arguments = ['--mode', (string) $row->param('mode'), '--workers', (string) $row->param('workers')];
        if ($row->param('mode') !== 'fpm') {
            $arguments[] = '--loop';
            $arguments[] = (string) ($row->param('loop') ?? 'select');
        }
        return $arguments;
    }

    /**
     * Starts the server of a row, checks it, loads it and stops it.
     *
     * @param list<string> $serveArguments
     * @param array<string, string> $serverEnv
     * @param \Closure(array{status: int, headers: array<string, string>, body: string}): ?string $check
     *        returns what is wrong with the probe's answer, or null
     */
    protected function measureHttp(
        Row $row,
        Environment $env,
        string $app,
        array $serveArguments,
        \Closure $check,
        string $path = '/',
        array $serverEnv = [],
        ?string $script = null,
        ?float $duration = null,
        int $timeout = Wrk::TIMEOUT,
    ): void {
        $server = $this->startServer($row, $env, $app, $serveArguments, $serverEnv);
        if ($server === null) {
            return;
        }
        try {
            $this->loadServer($row, $env, $server, $check, $path, $script, $duration, $timeout);
        } finally {
            $note = $server->stop();
            if ($note !== null) {
                $row->notes[] = "server $note";
            }
        }
    }

    /**
     * @param list<string> $serveArguments
     * @param array<string, string> $serverEnv
     */
    protected function startServer(Row $row, Environment $env, string $app, array $serveArguments, array $serverEnv = []): ?Service
    {
        try {
            return $env->startWeft($app, $serveArguments, $this->name() . '-' . $row->label(), $serverEnv, $row->param('mode') === 'fpm' ? 60.0 : 30.0);
        } catch (\Weft\Bench\Process\ServiceFailed $e) {
            $row->fail('server did not start: ' . $e->getMessage());
            if ($e->getCode() === \Weft\Bench\Process\ServiceFailed::DOOMED) {
                $this->bootFailures[(string) $row->param('mode')] = $e->getMessage();
            }
            return null;
        }
    }

    /**
     * @param \Closure(array{status: int, headers: array<string, string>, body: string}): ?string $check
     * @param null|\Closure(int): array{status: int, headers: array<string, string>, body: string} $probe
     *        sends the check request to a port (default: GET $path)
     */
    protected function loadServer(Row $row, Environment $env, Service $server, \Closure $check, string $path = '/', ?string $script = null, ?float $duration = null, int $timeout = Wrk::TIMEOUT, ?\Closure $probe = null): void
    {
        $url = "http://127.0.0.1:{$server->port}$path";
        try {
            $answer = $probe !== null ? $probe($server->port) : Probe::get('127.0.0.1', $server->port, $path, 15.0);
        } catch (\RuntimeException $e) {
            $row->fail('the server did not answer the check request: ' . $e->getMessage());
            return;
        }
        $problem = $check($answer);
        if ($problem !== null) {
            $row->fail('wrong answer to the check request (' . ($probe !== null ? 'first request' : "GET $path") . "): $problem");
            return;
        }
        $seconds = $duration ?? $env->settings->duration();
        $concurrency = (int) $row->param('concurrency');
        $run = Measurement::run(
            $env,
            $server->pid(),
            Wrk::command((string) $env->tools->path('wrk'), $url, $concurrency, $seconds, $script, $timeout),
            'wrk-' . $this->name(),
            $seconds + $timeout + 15,
        );
        $result = WrkParser::parse($run['output']);
        $row->metrics = $result->metrics() + Measurement::serverMetrics($run['usage'], $result->requests);
        $row->status = Row::OK;
        if ($env->settings->ab && $env->tools->has('ab')) {
            $this->runAb($row, $env, $server, $url, $seconds, $concurrency);
        } elseif ($env->settings->ab) {
            $row->notes[] = Tools::missing('ab');
        }
    }

    private function runAb(Row $row, Environment $env, Service $server, string $url, float $seconds, int $concurrency): void
    {
        try {
            $run = Measurement::run($env, $server->pid(), Wrk::abCommand((string) $env->tools->path('ab'), $url, $concurrency, $seconds), 'ab-' . $this->name(), $seconds + Wrk::TIMEOUT + 15);
            $ab = AbParser::parse($run['output'])->metrics();
            $row->metrics['ab'] = [
                'rps' => $ab['rps'], 'requests' => $ab['requests'], 'p50_ms' => $ab['p50_ms'], 'p90_ms' => $ab['p90_ms'],
                'p99_ms' => $ab['p99_ms'], 'max_ms' => $ab['max_ms'], 'errors' => $ab['errors'],
                'cpu_pct' => $run['usage']['cpu_pct'], 'rss_bytes' => $run['usage']['rss_bytes'],
            ];
            $row->metrics['ab_rps'] = $ab['rps'];
            $row->metrics['ab_p99_ms'] = $ab['p99_ms'];
        } catch (\RuntimeException $e) {
            $row->notes[] = 'ab failed: ' . $e->getMessage();
        }
    }

    /** The Netty reference rows (mode netty, in hello and sleep) need Java and libnetty-java. */
    protected function preSkip(Row $row, Environment $env): ?string
    {
        if ($row->param('mode') === 'netty' && ($why = Netty::unavailable()) !== null) {
            return $why;
        }
        return parent::preSkip($row, $env);
    }

    /**
     * Runs a Netty reference row: the same check and load as a Weft row, against the Java server.
     *
     * @param int $loopThreads event-loop threads
     * @param int $sleepMs 0, or the blocking wait of each request in a pool of $poolThreads threads
     */
    protected function measureNetty(Row $row, Environment $env, int $loopThreads, int $sleepMs, int $poolThreads, string $path = '/', ?string $script = null): void
    {
        if ($env->build() !== null) {
            $row->skip('the Java reference does not depend on the build: it runs with this build\'s rows only');
            return;
        }
        try {
            $server = Netty::start($env, $loopThreads, $sleepMs, $poolThreads, $this->name() . '-' . $row->label());
        } catch (\Weft\Bench\Process\ServiceFailed|\RuntimeException $e) {
            $row->fail('Netty did not start: ' . $e->getMessage());
            return;
        }
        try {
            // HotSpot compiles hot code only after thousands of calls: an unmeasured warm-up gives the JVM
            // what opcache and the JIT give PHP before the first measured request.
            $seconds = $this->settings->quick ? self::NETTY_WARM_UP / 2 : self::NETTY_WARM_UP;
            $warmUp = $env->startLoad(Wrk::command((string) $env->tools->path('wrk'), "http://127.0.0.1:{$server->port}$path", (int) $row->param('concurrency'), $seconds, $script), 'wrk-netty-warm-up');
            $warmUp->wait($seconds + Wrk::TIMEOUT + 5);
            $warmUp->terminate(1.0);
            $env->processes->forget($warmUp);
            $this->loadServer($row, $env, $server, self::expectBody('Hello World'), $path, $script);
        } finally {
            $note = $server->stop();
            if ($note !== null) {
                $row->notes[] = "server $note";
            }
        }
    }

    /**
     * Weft's coroutine mode against the Netty reference, per concurrency: throughput and memory.
     *
     * @param list<Row> $ok
     */
    protected static function nettyLine(array $ok): ?string
    {
        $parts = [];
        foreach (Findings::values(Findings::ok($ok, ['mode' => 'netty']), 'concurrency') as $c) {
            $netty = Findings::best(Findings::ok($ok, ['mode' => 'netty', 'concurrency' => $c]));
            $co = Findings::best(Findings::ok($ok, ['mode' => 'coroutine', 'concurrency' => $c]));
            if ($netty === null || $co === null || $netty->number('rps') <= 0) {
                continue;
            }
            $parts[] = \sprintf(
                'at concurrency %d, Weft coroutine (%s) %s req/s against Netty (%s) %s, %s; memory %s against %s PSS',
                $c, $co->label('mode', 'concurrency'), Format::rate($co->number('rps')), $netty->label('mode', 'loop', 'concurrency'), Format::rate($netty->number('rps')),
                Format::times($co->number('rps') / $netty->number('rps')), Format::bytes($co->number('pss_bytes')), Format::bytes($netty->number('pss_bytes')),
            );
        }
        return $parts === [] ? null : 'Against the Java Netty reference: ' . \implode('; ', $parts) . '.';
    }

    /**
     * The mean resident memory of a server's workers (every process of its tree but the master), in
     * bytes, or null when there is none to read.
     */
    protected static function workerRss(Service $server): ?int
    {
        $total = 0;
        $count = 0;
        foreach (\Weft\Bench\Process\ProcessTree::members($server->pid()) as $pid) {
            if ($pid === $server->pid()) {
                continue;
            }
            $usage = \Weft\Bench\Process\ProcessUsage::read($pid);
            if ($usage !== null) {
                $total += $usage->rssBytes;
                $count++;
            }
        }
        return $count === 0 ? null : \intdiv($total, $count);
    }

    /**
     * The framework instances a coroutine row's load booted in each worker (the most of any worker), as
     * the workers report them (`status`): a worker boots its first at its start and a further one only
     * when a request is let into the framework while all are busy. The workers report about once a
     * second: this waits up to 3 s for a report made after the load. Null for a row without a pool of
     * several, or when no worker says.
     */
    protected static function instancesBooted(Service $server, Row $row): ?int
    {
        if ((int) ($row->param('instances') ?? 1) <= 1 || $row->param('mode') !== 'coroutine') {
            return null;
        }
        $since = \microtime(true);
        $deadline = $since + 3.0;
        $most = null;
        do {
            $workers = (array) ($server->status()['workers'] ?? []);
            $fresh = $workers !== [];
            foreach ($workers as $worker) {
                if (isset($worker['app_instances'])) {
                    $most = \max($most ?? 0, (int) $worker['app_instances']);
                }
                $fresh = $fresh && (float) ($worker['updated'] ?? 0) >= $since;
            }
            if ($fresh) {
                return $most;
            }
            \usleep(100_000);
        } while (\microtime(true) < $deadline);
        return $most;
    }

    /** A check for an exact body. */
    protected static function expectBody(string $expected): \Closure
    {
        return static function (array $answer) use ($expected): ?string {
            if ($answer['status'] !== 200) {
                return "status {$answer['status']} (body: " . \substr($answer['body'], 0, 100) . ')';
            }
            return $answer['body'] === $expected ? null : 'body ' . \json_encode(\substr($answer['body'], 0, 100)) . ', expected ' . \json_encode($expected);
        };
    }

    /** @return list<\Weft\Bench\Report\Column> */
    protected function abColumns(): array
    {
        if (!$this->settings->ab) {
            return [];
        }
        return [
            new \Weft\Bench\Report\Column('ab -k req/s', static fn (Row $r): string => \Weft\Bench\Report\Format::rate($r->number('ab_rps'))),
            new \Weft\Bench\Report\Column('ab p99 ms', static fn (Row $r): string => \Weft\Bench\Report\Format::ms($r->number('ab_p99_ms'))),
        ];
    }
}
