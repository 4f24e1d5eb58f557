<?php

declare(strict_types=1);

namespace Weft\Bench\Scenario;

use Weft\Bench\Environment;
use Weft\Bench\Load\LineLoad;
use Weft\Bench\Load\Measurement;
use Weft\Bench\Load\Probe;
use Weft\Bench\Report\Chart;
use Weft\Bench\Report\Check;
use Weft\Bench\Report\Column;
use Weft\Bench\Report\Findings;
use Weft\Bench\Report\Format;
use Weft\Bench\Row;

/** docs/benchmarks.md, line: a Telnet-like echo server, few fast clients against many idle-ish ones, select against epoll. */
final class LineScenario extends AbstractScenario
{
    public const FEW_CLIENTS = 2;
    public const MANY_CLIENTS = 1000;
    /** Without epoll in the client, the 1000 clients are split so that no process watches fds >= 1024 with select. */
    public const SELECT_CLIENTS_PER_PROCESS = 250;

    private ?string $clientSplit = null;

    public function name(): string
    {
        return 'line';
    }

    public function title(): string
    {
        return 'line — Telnet-like line protocol, few vs many connections';
    }

    public function description(): string
    {
        return 'examples/echo-line.php (coroutine mode, `--protocol line`) echoes every "hello world\n". Weft\'s own load client: '
            . '**few-fast**: 2 clients, each connects, sends a line and reads the reply 100 times, disconnects, and again until the time is up; '
            . '**many**: 1000 clients connect once, then each sends a line and reads its reply, over and over. A reply other than "hello world", '
            . 'a failed connect, a timeout (5 s) or a closed connection is an error. Published: few-fast ~31k messages/s with 1 server process, '
            . '43k with 32 (24 cores); on 2 cores select beat libevent (18k vs 13k); many (2 cores): select 887 msg/s, libevent 7064 msg/s, '
            . 'and 1 process beat 32.';
    }

    public function unavailable(Environment $env): ?string
    {
        return self::missingFiles($env, ['echo-line.php']);
    }

    public function comparesBuilds(): bool
    {
        return true;
    }

    public function rows(Environment $env): array
    {
        $s = $this->settings;
        $rows = [];
        foreach ($s->loops ?? ['select', 'epoll'] as $loop) {
            foreach ($s->axis([1, 2, 4, 32], [1, 4], $s->workers) as $w) {
                foreach (['few-fast', 'many'] as $pattern) {
                    $rows[] = new Row($this->name(), ['loop' => $loop, 'workers' => $w, 'pattern' => $pattern]);
                }
            }
        }
        return $this->preSkipAll($rows, $env);
    }

    public function notes(Environment $env): array
    {
        $split = $env->clientEpoll()
            ? 'The many-pattern client runs as one process of 1000 clients on the epoll loop (select cannot watch descriptors ≥ 1024).'
            : \sprintf('The many-pattern client is split over %d processes of %d clients on the select loop (select cannot watch descriptors ≥ 1024, and the epoll loop is not available: %s).', \intdiv(self::MANY_CLIENTS, self::SELECT_CLIENTS_PER_PROCESS), self::SELECT_CLIENTS_PER_PROCESS, $env->epollUnavailable());
        return [
            $split . ' The few-fast client is one process. Client processes run on the load CPU.',
            'Latency percentiles are of round trips (one in eight sampled), measured by the client; in the many pattern the worst process is shown.',
        ];
    }

    public function run(Row $row, Environment $env): void
    {
        $server = null;
        try {
            $server = $env->startWeft(self::exampleFile($env, 'echo-line.php'), ['--protocol', 'line', '--mode', 'coroutine', '--workers', (string) $row->param('workers'), '--loop', (string) $row->param('loop')], 'line-' . $row->label());
        } catch (\Weft\Bench\Process\ServiceFailed $e) {
            $row->fail('server did not start: ' . $e->getMessage());
            return;
        }
        try {
            try {
                $reply = Probe::line('127.0.0.1', $server->port, LineLoad::LINE);
            } catch (\RuntimeException $e) {
                $row->fail('the server did not echo the check line: ' . $e->getMessage());
                return;
            }
            if ($reply !== LineLoad::LINE) {
                $row->fail('wrong echo: ' . \json_encode($reply));
                return;
            }
            $seconds = $this->settings->duration();
            $many = $row->param('pattern') === 'many';
            $epoll = $env->clientEpoll(); // the client's loop: the same for a baseline row
            $processes = $many && !$epoll ? \intdiv(self::MANY_CLIENTS, self::SELECT_CLIENTS_PER_PROCESS) : 1;
            $clients = $many ? \intdiv(self::MANY_CLIENTS, $processes) : self::FEW_CLIENTS;
            $command = [$env->php(), ...$env->clientPhpFlags(), $env->weftBin(), 'bench', '_line-load', '--port', (string) $server->port, '--pattern', (string) $row->param('pattern'), '--clients', (string) $clients, '--duration', (string) $seconds];
            $run = Measurement::runAll($env, $server->pid(), \array_fill(0, $processes, $command), 'line-load', $seconds + 40, ['WEFT_LOOP' => $many && $epoll ? 'epoll' : ($many ? 'select' : 'auto')]);
            $this->record($row, $run['outputs'], $run['usage'], $processes, $clients);
        } finally {
            $note = $server->stop();
            if ($note !== null) {
                $row->notes[] = "server $note";
            }
        }
    }

    /**
     * @param list<string> $outputs
     * @param array<string, mixed> $usage
     */
    private function record(Row $row, array $outputs, array $usage, int $processes, int $clients): void
    {
        $rate = 0.0;
        $messages = 0;
        $errors = ['connect' => 0, 'timeout' => 0, 'closed' => 0, 'mismatch' => 0];
        $p50 = [];
        $p90 = [];
        $p99 = [];
        $max = [];
        foreach ($outputs as $output) {
            $lines = \array_values(\array_filter(\explode("\n", \trim($output))));
            $r = \json_decode((string) \end($lines), true);
            if (!\is_array($r)) {
                $row->fail('the load client printed no result: ' . \substr(\trim($output), -200));
                return;
            }
            $rate += $r['messages_per_second'];
            $messages += $r['messages'];
            foreach ($r['errors'] as $kind => $count) {
                $errors[$kind] = ($errors[$kind] ?? 0) + $count;
            }
            foreach (['p50' => &$p50, 'p90' => &$p90, 'p99' => &$p99, 'max' => &$max] as $key => &$list) {
                if ($r[$key . '_ms'] !== null) {
                    $list[] = $r[$key . '_ms'];
                }
            }
            unset($list);
        }
        $row->metrics = [
            'rps' => \round($rate, 1),
            'messages' => $messages,
            'p50_ms' => $p50 === [] ? null : \round(\max($p50), 3),
            'p90_ms' => $p90 === [] ? null : \round(\max($p90), 3),
            'p99_ms' => $p99 === [] ? null : \round(\max($p99), 3),
            'max_ms' => $max === [] ? null : \round(\max($max), 3),
            'errors' => $errors,
            'client_processes' => $processes,
            'clients_per_process' => $clients,
        ] + Measurement::serverMetrics($usage, $messages);
        $row->metrics['pss_per_process'] = $usage['pss_bytes'] !== null && $usage['processes'] > 0 ? (int) ($usage['pss_bytes'] / $usage['processes']) : null;
        $row->metrics['rss_per_process'] = $usage['processes'] > 0 ? (int) ($usage['rss_bytes'] / $usage['processes']) : null;
        $row->status = Row::OK;
    }

    public function columns(): array
    {
        return [
            Column::param('loop', 'loop'),
            Column::param('workers', 'workers'),
            Column::param('pattern', 'pattern'),
            new Column('messages/s', static fn (Row $r): string => Format::rate($r->number('rps'))),
            new Column('p50 ms', static fn (Row $r): string => Format::ms($r->number('p50_ms'))),
            new Column('p90 ms', static fn (Row $r): string => Format::ms($r->number('p90_ms'))),
            new Column('p99 ms', static fn (Row $r): string => Format::ms($r->number('p99_ms'))),
            new Column('max ms', static fn (Row $r): string => Format::ms($r->number('max_ms'))),
            new Column('errors', static fn (Row $r): string => $r->isOk() ? Format::errors($r->metric('errors')) : Format::NONE, false),
            new Column('CPU %', static fn (Row $r): string => Format::pct($r->number('cpu_pct'))),
            new Column('CPU µs/msg', static fn (Row $r): string => Format::number($r->number('cpu_us_per_req'))),
            new Column('RSS total', static fn (Row $r): string => Format::bytes($r->number('rss_bytes'))),
            new Column('PSS total', static fn (Row $r): string => Format::bytes($r->number('pss_bytes'))),
            new Column('procs', static fn (Row $r): string => Format::number($r->number('processes'), 0)),
            new Column('PSS/proc', static fn (Row $r): string => Format::bytes($r->number('pss_per_process'))),
            Column::status(),
        ];
    }

    public function charts(): array
    {
        return [
            new Chart('line-rate.svg', 'line: messages/s against server processes', 'workers', 'server worker processes', 'rps', 'messages/s', ['pattern', 'loop']),
            new Chart('line-p99.svg', 'line: p99 round trip against server processes', 'workers', 'server worker processes', 'p99_ms', 'p99 round trip (ms)', ['pattern', 'loop']),
        ];
    }

    public function findings(array $rows): array
    {
        $ok = Findings::ok($rows);
        if ($ok === []) {
            return [Findings::NOTHING_RAN];
        }
        $out = [];
        foreach (Findings::groupBy($ok, ['pattern']) as $pattern => $group) {
            $best = Findings::best($group);
            $worst = Findings::worst($group);
            $out[] = \sprintf('%s: best %s msg/s (%s), worst %s msg/s (%s).', $pattern, Format::rate($best->number('rps')), $best->label(), Format::rate($worst->number('rps')), $worst->label());
        }
        $loops = HelloScenario::loops($ok);
        if ($loops !== null) {
            $out[] = \str_replace('(requests/s)', '(messages/s)', $loops);
        }
        $out[] = Findings::workersLine($ok, ['loop', 'pattern'], 'msg/s');
        $idle = Findings::unsaturated($ok, $this->serverCores);
        if ($idle !== null) {
            $out[] = $idle;
        }
        $pss = \array_filter(\array_map(static fn (Row $r) => $r->number('pss_per_process'), $ok));
        if ($pss !== []) {
            $out[] = \sprintf('Memory per server process (PSS): %s to %s.', Format::bytes(\min($pss)), Format::bytes(\max($pss)));
        }
        $cpu = Findings::cpuPerRequest($ok, 'pattern', 'message');
        if ($cpu !== null) {
            $out[] = $cpu;
        }
        $out[] = Findings::errorsLine($rows);
        return $out;
    }

    public function checks(array $rows): array
    {
        $ok = Findings::ok($rows);
        $checks = [];
        if ($ok === []) {
            return [Check::unknown('messages/s, errors (must be 0), memory per process, and which backend wins where', 'no row ran')];
        }
        $withErrors = \array_filter($ok, static fn (Row $r) => $r->errorTotal() > 0);
        $checks[] = new Check('errors must be 0', $withErrors === [], $withErrors === []
            ? 'no error in ' . \count($ok) . ' rows'
            : \implode('; ', \array_map(static fn (Row $r) => $r->label() . ': ' . Format::errors($r->metric('errors')), $withErrors)),
            \array_values(\array_map(static fn (Row $r): string => $r->label(), $withErrors)));
        $measured = \array_filter($ok, static fn (Row $r) => $r->number('rps') > 0 && $r->number('pss_per_process') !== null);
        $checks[] = new Check('messages/s and memory per process for every row', \count($measured) === \count($ok), \count($measured) . ' of ' . \count($ok) . ' rows that ran have both');
        $claim = 'which backend wins where';
        $parts = [];
        foreach (Findings::groupBy($ok, ['pattern', 'workers']) as $group => $members) {
            $select = Findings::ok($members, ['loop' => 'select']);
            $epoll = Findings::ok($members, ['loop' => 'epoll']);
            if ($select !== [] && $epoll !== []) {
                $s = $select[0]->number('rps');
                $e = $epoll[0]->number('rps');
                $parts[] = \sprintf('%s: %s %s', $group, $e >= $s ? 'epoll' : 'select', Format::times(\max($s, $e) / \max(1e-9, \min($s, $e))));
            }
        }
        $checks[] = $parts === []
            ? Check::unknown($claim, 'select and epoll did not both run one configuration')
            : new Check($claim, true, \implode('; ', $parts));
        return $checks;
    }
}
