<?php

declare(strict_types=1);

namespace Weft\Bench\Scenario;

use Weft\Bench\Environment;
use Weft\Bench\Load\Wrk;
use Weft\Bench\Report\Chart;
use Weft\Bench\Report\Check;
use Weft\Bench\Report\Column;
use Weft\Bench\Report\Findings;
use Weft\Bench\Report\Format;
use Weft\Bench\Row;

/** docs/benchmarks.md, hello: nothing but Hello World, in every mode, on both loops. */
final class HelloScenario extends HttpScenario
{
    public function name(): string
    {
        return 'hello';
    }

    public function title(): string
    {
        return 'hello — nothing but Hello World';
    }

    public function description(): string
    {
        return 'examples/hello.php answers every GET with "Hello World". Published: a coroutine PHP server and Java Netty '
            . 'within a few percent of each other at concurrency 1000 with keep-alive (PHP using 30 MB against 600 MB): the "netty" rows '
            . 'are that Java reference (Netty 4 from Debian, one event-loop thread per worker, default JVM settings, after an unmeasured 2 s warm-up, 1 s in --quick, for the HotSpot compiler), '
            . 'skipped when Java is not installed; a '
            . 'pure-PHP event server and Swoole within 5 % at concurrency 100. wrk keeps its connections alive.'
            . ($this->settings->varied ? ' Rows marked "varied" use a wrk Lua script that changes the path, the query and one header on every request.' : '');
    }

    public function unavailable(Environment $env): ?string
    {
        return parent::unavailable($env) ?? self::missingFiles($env, ['hello.php']);
    }

    public function rows(Environment $env): array
    {
        $s = $this->settings;
        $modes = $s->axis(['fpm', 'sync', 'coroutine', 'netty'], ['fpm', 'sync', 'coroutine', 'netty'], $s->modes);
        $loops = $s->axis(['select', 'epoll'], ['select', 'epoll'], $s->loops);
        $workers = $s->axis([1, 2], [1], $s->workers);
        $concurrency = $s->axis([100, 1000], [100, 1000], $s->concurrency);
        $variants = $s->varied ? ['plain', 'varied'] : [null];
        $rows = [];
        foreach ($modes as $mode) {
            foreach (\in_array($mode, ['fpm', 'netty'], true) ? [null] : $loops as $loop) {
                foreach ($workers as $w) {
                    foreach ($concurrency as $c) {
                        foreach ($variants as $variant) {
                            $params = ['mode' => $mode, 'loop' => $loop, 'workers' => $w, 'concurrency' => $c];
                            if ($variant !== null) {
                                $params['requests'] = $variant;
                            }
                            $rows[] = new Row($this->name(), $params);
                        }
                    }
                }
            }
        }
        return $this->preSkipAll($rows, $env);
    }

    public function run(Row $row, Environment $env): void
    {
        $script = null;
        $path = '/';
        if ($row->param('requests') === 'varied') {
            $script = $env->outDir . '/varied.lua';
            if (!\is_file($script)) {
                \file_put_contents($script, Wrk::variedScript());
            }
            $path = '/users/42?page=3&q=item1';
        }
        if ($row->param('mode') === 'netty') {
            // The Java reference: as many event-loop threads as the row has workers.
            $this->measureNetty($row, $env, (int) $row->param('workers'), 0, 1, $path, $script);
            return;
        }
        $this->measureHttp($row, $env, self::exampleFile($env, 'hello.php'), self::serveArguments($row), self::expectBody('Hello World'), $path, [], $script);
    }

    public function columns(): array
    {
        $columns = [
            Column::param('mode', 'mode'),
            Column::param('loop', 'loop'),
            Column::param('workers', 'workers'),
            Column::param('conc.', 'concurrency'),
        ];
        if ($this->settings->varied) {
            $columns[] = Column::param('requests', 'requests');
        }
        return [...$columns, ...Column::http(), ...$this->abColumns(), Column::status()];
    }

    public function charts(): array
    {
        $series = ['mode', 'loop', 'workers', 'requests'];
        return [
            // Bars: the resident configurations are close to each other, and as lines they lie on top of one another.
            new Chart('hello-rps.svg', 'hello: requests/s by concurrency', 'concurrency', 'concurrent connections', 'rps', 'requests/s', $series, Chart::BARS),
            new Chart('hello-p99.svg', 'hello: p99 latency by concurrency', 'concurrency', 'concurrent connections', 'p99_ms', 'p99 latency (ms)', $series, Chart::BARS),
        ];
    }

    public function findings(array $rows): array
    {
        $ok = Findings::ok($rows);
        if ($ok === []) {
            return [Findings::NOTHING_RAN];
        }
        $out = [];
        $out[] = Findings::winner($ok, 'mode') . '.';
        \array_push($out, ...Findings::winnersByConcurrency($ok, 'mode'));
        $cpu = Findings::cpuPerRequest($ok, 'mode');
        if ($cpu !== null) {
            $out[] = $cpu;
        }
        $out[] = self::memory($ok);
        $out[] = self::nettyLine($ok);
        $loopLine = self::loops($ok);
        if ($loopLine !== null) {
            $out[] = $loopLine;
        }
        foreach (Findings::groupBy(Findings::ok($ok, ['mode' => 'coroutine']), ['loop', 'workers']) as $group => $series) {
            $flat = Findings::flatness($series);
            if ($flat !== null) {
                $out[] = \sprintf('coroutine %s kept %d %% of its best throughput across concurrency %s.', $group, (int) \round($flat * 100), \implode('/', Findings::values($series, 'concurrency')));
            }
        }
        $out[] = Findings::workersLine($ok, ['mode', 'loop', 'concurrency', 'requests']);
        $idle = Findings::unsaturated($ok, $this->serverCores);
        if ($idle !== null) {
            $out[] = $idle;
        }
        $out[] = Findings::errorsLine($rows);
        return $out;
    }

    /** @param list<Row> $ok */
    private static function memory(array $ok): string
    {
        $parts = [];
        foreach (Findings::groupBy($ok, ['mode']) as $mode => $rows) {
            $pss = \array_filter(\array_map(static fn (Row $r) => $r->number('pss_bytes'), $rows));
            $rss = \array_filter(\array_map(static fn (Row $r) => $r->number('rss_bytes'), $rows));
            if ($rss !== []) {
                $parts[] = \sprintf('%s %s–%s RSS / %s PSS at most', $mode, Format::bytes(\min($rss)), Format::bytes(\max($rss)), $pss === [] ? Format::NONE : Format::bytes(\max($pss)));
            }
        }
        return 'Total server memory (all processes, peak during the run): ' . \implode('; ', $parts) . '.';
    }

    /** Where both loops ran the same configuration, how epoll compares with select. @param list<Row> $ok */
    public static function loops(array $ok): ?string
    {
        $pairs = [];
        foreach (Findings::ok($ok, ['loop' => 'select']) as $select) {
            foreach (Findings::ok($ok, ['loop' => 'epoll']) as $epoll) {
                $same = true;
                foreach ($select->params as $name => $value) {
                    if ($name !== 'loop' && $epoll->param($name) !== $value) {
                        $same = false;
                    }
                }
                if ($same) {
                    $pairs[] = [$select, $epoll];
                }
            }
        }
        if ($pairs === []) {
            return null;
        }
        $parts = [];
        foreach ($pairs as [$select, $epoll]) {
            $parts[] = \sprintf('%s %s', $select->label('loop'), Format::change($select->number('rps'), $epoll->number('rps')));
        }
        return 'epoll against select (requests/s): ' . \implode(', ', $parts) . '.';
    }

    public function checks(array $rows): array
    {
        $ran = \array_values(\array_filter($rows, static fn (Row $r) => $r->isOk()));
        $complete = \array_filter($ran, static fn (Row $r) => $r->number('rps') !== null && $r->number('p99_ms') !== null && $r->number('rss_bytes') !== null);
        $fpm = Findings::ok($rows, ['mode' => 'fpm']);
        $resident = Findings::ok($rows, ['mode' => ['sync', 'coroutine']]);
        return [
            $ran === []
                ? Check::unknown('requests/s, latency and total RSS for every row', 'no row ran')
                : new Check('requests/s, latency and total RSS for every row', \count($complete) === \count($ran), \count($complete) . ' of ' . \count($ran) . ' rows that ran have all three'),
            $fpm === [] || $resident === []
                ? Check::unknown('fpm for contrast', $fpm === [] ? 'no fpm row ran (see its note)' : 'no resident row ran')
                : new Check('fpm for contrast', true, \sprintf('fpm best %s req/s against %s for the best resident row', Format::rate(Findings::best($fpm)->number('rps')), Format::rate(Findings::best($resident)->number('rps')))),
        ];
    }
}
