<?php

declare(strict_types=1);

namespace Weft\Bench\Scenario;

use Weft\Bench\Environment;
use Weft\Bench\Load\LineLoad;
use Weft\Bench\Load\Measurement;
use Weft\Bench\Report\Check;
use Weft\Bench\Report\Column;
use Weft\Bench\Report\Findings;
use Weft\Bench\Report\Format;
use Weft\Bench\Row;

/**
 * Issue 13 §3: WebSocket echo against the line protocol (the same work plus framing), and a broadcast
 * to 10,000 connections of one worker. All rows: 1 worker, coroutine mode, epoll (select cannot watch
 * 10,000 descriptors).
 */
final class WebSocketScenario extends AbstractScenario
{
    public const ECHO_CLIENTS = 1000;
    public const BROADCAST_CLIENTS = 10000;
    /** Descriptors the broadcast row needs in each of the server and the client process. */
    private const BROADCAST_FDS = self::BROADCAST_CLIENTS + 200;
    /** The WebSocket echo's server CPU per message may be at most this multiple of the line protocol's. */
    public const CPU_RATIO_TARGET = 1.3;

    public function name(): string
    {
        return 'websocket';
    }

    public function title(): string
    {
        return 'websocket — echo against the line protocol, and a broadcast to 10,000 connections';
    }

    public function description(): string
    {
        return '1 worker, coroutine mode, epoll. **line**: examples/echo-line.php, ' . self::ECHO_CLIENTS . ' clients connect once, then each sends '
            . '"hello world\n" and reads the reply, over and over (the "many" pattern of the line experiment, docs/benchmarks.md). **ws-echo**: examples/websocket-echo.php (the event form, a Weft\\WebSocket\\Handler), the same with '
            . self::ECHO_CLIENTS . ' WebSocket clients (a masked text frame out, the echoed frame back). **ws-broadcast**: '
            . 'examples/websocket-broadcast.php (the event form too), ' . self::BROADCAST_CLIENTS . ' WebSocket clients connect; then, round after round, one of them '
            . 'sends a message, which the server sends to all; a round lasts until the last client has it. Load clients are Weft\'s own '
            . '(one process on the load CPU, epoll). CPU µs/msg is the server\'s CPU time over the messages the clients received, connecting and handshakes included '
            . '(so short rows, as in --quick, weigh the WebSocket handshakes more).';
    }

    public function unavailable(Environment $env): ?string
    {
        if (($why = $env->epollUnavailable()) !== null) {
            return 'needs the epoll loop: ' . $why;
        }
        return self::missingFiles($env, ['echo-line.php', 'websocket-echo.php', 'websocket-broadcast.php']);
    }

    public function rows(Environment $env): array
    {
        $rows = [];
        foreach (['line', 'ws-echo', 'ws-broadcast'] as $case) {
            $rows[] = new Row($this->name(), ['case' => $case, 'workers' => 1, 'connections' => $case === 'ws-broadcast' ? self::BROADCAST_CLIENTS : self::ECHO_CLIENTS]);
        }
        $this->serverCores = $env->serverCores();
        if (($why = self::raiseFdLimit()) !== null) {
            $rows[2]->skip($why);
        }
        return $rows;
    }

    public function estimate(Row $row): float
    {
        return $row->param('case') === 'ws-broadcast' ? 20.0 : $this->settings->duration() + 3.0;
    }

    public function notes(Environment $env): array
    {
        return ['The broadcast time is measured by the client process, which also has to read 10,000 sockets: it is an upper bound of the server\'s part.'];
    }

    public function run(Row $row, Environment $env): void
    {
        $case = (string) $row->param('case');
        $app = match ($case) {
            'line' => 'echo-line.php',
            'ws-echo' => 'websocket-echo.php',
            default => 'websocket-broadcast.php',
        };
        $arguments = ['--mode', 'coroutine', '--workers', '1', '--loop', 'epoll', '--max-connections', (string) (self::BROADCAST_CLIENTS + 100)];
        if ($case === 'line') {
            $arguments = [...$arguments, '--protocol', 'line'];
        }
        try {
            $server = $env->startWeft(self::exampleFile($env, $app), $arguments, 'websocket-' . $case);
        } catch (\Weft\Bench\Process\ServiceFailed $e) {
            $row->fail('server did not start: ' . $e->getMessage());
            return;
        }
        try {
            $seconds = $this->settings->duration();
            $clients = (int) $row->param('connections');
            $command = [$env->php(), ...$env->clientPhpFlags(), $env->weftBin(), 'bench', $case === 'line' ? '_line-load' : '_ws-load', '--port', (string) $server->port,
                '--pattern', match ($case) { 'line' => 'many', 'ws-echo' => 'echo', default => 'broadcast' },
                '--clients', (string) $clients, '--duration', (string) ($case === 'ws-broadcast' ? ($this->settings->quick ? 3 : 10) : $seconds)];
            $run = Measurement::runAll($env, $server->pid(), [$command], 'websocket-load', $seconds + 120, ['WEFT_LOOP' => 'epoll']);
            $lines = \array_values(\array_filter(\explode("\n", \trim($run['outputs'][0]))));
            $r = \json_decode((string) \end($lines), true);
            if (!\is_array($r)) {
                $row->fail('the load client printed no result: ' . \substr(\trim($run['outputs'][0]), -200));
                return;
            }
            $row->metrics = [
                'rps' => \round($r['messages_per_second'], 1),
                'messages' => $r['messages'],
                'p50_ms' => $r['p50_ms'],
                'p99_ms' => $r['p99_ms'],
                'errors' => $r['errors'],
                'last_p50_ms' => $r['last_p50_ms'] ?? null,
                'last_max_ms' => $r['last_max_ms'] ?? null,
                'rounds' => $r['rounds'] ?? null,
            ] + Measurement::serverMetrics($run['usage'], (int) $r['messages']);
            $row->status = Row::OK;
        } catch (\RuntimeException $e) {
            $row->fail($e->getMessage());
        } finally {
            $note = $server->stop();
            if ($note !== null) {
                $row->notes[] = "server $note";
            }
        }
    }

    /** The broadcast needs 10,000+ descriptors in the server and in the client: raise the soft limit to the hard one. */
    private static function raiseFdLimit(): ?string
    {
        $limits = \function_exists('posix_getrlimit') ? \posix_getrlimit() : false;
        if ($limits === false) {
            return 'cannot read the descriptor limit (posix_getrlimit)';
        }
        $soft = $limits['soft openfiles'];
        $hard = $limits['hard openfiles'];
        if ($soft !== 'unlimited' && (int) $soft < self::BROADCAST_FDS) {
            if ($hard !== 'unlimited' && (int) $hard < self::BROADCAST_FDS) {
                return \sprintf('needs %d open files per process; the hard limit is %s (raise it: ulimit -Hn)', self::BROADCAST_FDS, $hard);
            }
            if (!\posix_setrlimit(\POSIX_RLIMIT_NOFILE, $hard === 'unlimited' ? self::BROADCAST_FDS * 2 : (int) $hard, $hard === 'unlimited' ? \POSIX_RLIMIT_INFINITY : (int) $hard)) {
                return 'could not raise the open-files limit to ' . self::BROADCAST_FDS;
            }
        }
        return null;
    }

    public function columns(): array
    {
        return [
            Column::param('case', 'case'),
            Column::param('connections', 'connections'),
            new Column('messages/s', static fn (Row $r): string => Format::rate($r->number('rps'))),
            new Column('p50 ms', static fn (Row $r): string => Format::ms($r->number('p50_ms'))),
            new Column('p99 ms', static fn (Row $r): string => Format::ms($r->number('p99_ms'))),
            new Column('last client p50 ms', static fn (Row $r): string => Format::ms($r->number('last_p50_ms'))),
            new Column('last client max ms', static fn (Row $r): string => Format::ms($r->number('last_max_ms'))),
            new Column('errors', static fn (Row $r): string => $r->isOk() ? Format::errors($r->metric('errors')) : Format::NONE, false),
            new Column('CPU %', static fn (Row $r): string => Format::pct($r->number('cpu_pct'))),
            new Column('CPU µs/msg', static fn (Row $r): string => Format::number($r->number('cpu_us_per_req'))),
            new Column('RSS total', static fn (Row $r): string => Format::bytes($r->number('rss_bytes'))),
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
        [$line, $ws, $broadcast] = self::cases($ok);
        if ($line !== null && $ws !== null) {
            $out[] = \sprintf('WebSocket echo: %s msg/s at %s µs of server CPU per message; the line protocol: %s msg/s at %s µs (%s).',
                Format::rate($ws->number('rps')), Format::number($ws->number('cpu_us_per_req')), Format::rate($line->number('rps')), Format::number($line->number('cpu_us_per_req')),
                Format::times(self::ratio($line, $ws)));
        }
        if ($broadcast !== null) {
            $out[] = \sprintf('Broadcast to %d connections: the last client had the message after %s ms (median of %d rounds; worst %s ms).',
                self::BROADCAST_CLIENTS, Format::ms($broadcast->number('last_p50_ms')), (int) $broadcast->number('rounds'), Format::ms($broadcast->number('last_max_ms')));
        }
        $out[] = Findings::errorsLine($rows);
        return $out;
    }

    public function checks(array $rows): array
    {
        [$line, $ws, $broadcast] = self::cases(Findings::ok($rows));
        $claim = \sprintf('WebSocket echo within %.1fx of the line protocol\'s server CPU per message', self::CPU_RATIO_TARGET);
        $checks = [];
        if ($line === null || $ws === null || $line->number('cpu_us_per_req') === null || $ws->number('cpu_us_per_req') === null) {
            $checks[] = Check::unknown($claim, 'the line and ws-echo rows did not both run');
        } else {
            $ratio = self::ratio($line, $ws);
            $checks[] = new Check($claim, $ratio <= self::CPU_RATIO_TARGET, \sprintf('%s vs %s µs/msg: %.2fx', Format::number($ws->number('cpu_us_per_req')), Format::number($line->number('cpu_us_per_req')), $ratio));
        }
        $claim = 'a broadcast reaches all ' . self::BROADCAST_CLIENTS . ' connections, without errors';
        $checks[] = $broadcast === null
            ? Check::unknown($claim, 'the broadcast row did not run')
            : new Check($claim, $broadcast->errorTotal() === 0, \sprintf('%d messages received, errors: %s', (int) $broadcast->number('messages'), Format::errors($broadcast->metric('errors'))));
        return $checks;
    }

    /** @param list<Row> $ok @return array{?Row, ?Row, ?Row} */
    private static function cases(array $ok): array
    {
        $find = static fn (string $case): ?Row => Findings::ok($ok, ['case' => $case])[0] ?? null;
        return [$find('line'), $find('ws-echo'), $find('ws-broadcast')];
    }

    private static function ratio(Row $line, Row $ws): float
    {
        return (float) $ws->number('cpu_us_per_req') / \max(1e-9, (float) $line->number('cpu_us_per_req'));
    }
}
