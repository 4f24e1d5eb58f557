<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Bench;

use PHPUnit\Framework\TestCase;
use Weft\Bench\Load\WrkParser;
use Weft\Bench\Report\Check;
use Weft\Bench\Report\ReportWriter;
use Weft\Bench\Row;
use Weft\Bench\RunLength;
use Weft\Bench\Scenario\SleepScenario;
use Weft\Bench\Scenario\UpstreamScenario;
use Weft\Bench\Settings;

/**
 * What the benchmark may claim from a row: connections that never got an answer are counted, rows too
 * short to judge are marked and left out of the verdicts, and a verdict that fails names its rows.
 */
final class RunTruthTest extends TestCase
{
    /** @param array<string, mixed> $params @param array<string, mixed> $metrics */
    private static function row(array $params, array $metrics, string $scenario = 'hello'): Row
    {
        $row = new Row($scenario, $params);
        $row->metrics = $metrics + ['errors' => ['connect' => 0, 'read' => 0, 'write' => 0, 'timeout' => 0, 'non2xx' => 0, 'no_answer' => 0]];
        $row->status = Row::OK;
        return $row;
    }

    public function testConnectionsWithoutAnAnswerAreCounted(): void
    {
        // A --quick hello row: 2 s at 1,000 connections, 352 answers. wrk itself reports no error at all.
        $r = WrkParser::parse((string) \file_get_contents(__DIR__ . '/Fixtures/wrk-quick-c1000.txt'));
        self::assertSame(1000, $r->connections);
        self::assertSame(352, $r->requests);
        self::assertSame(648, $r->errors['no_answer']);
        self::assertSame(648, $r->errorTotal());
        $m = $r->metrics();
        self::assertSame(1000, $m['connections']);
        self::assertSame(648, $m['errors']['no_answer']);

        // Enough answers for every connection: nothing is missing.
        self::assertSame(0, WrkParser::noAnswer(100, 171240, []));
        // Failed connects and timeouts are counted under their own kind, not twice.
        self::assertSame(40, WrkParser::noAnswer(100, 50, ['connect' => 6, 'timeout' => 4]));
        self::assertSame(0, WrkParser::noAnswer(100, 10, ['connect' => 100]));
        // wrk did not say how many connections it held open: nothing can be derived.
        self::assertSame(0, WrkParser::noAnswer(null, 0, []));
    }

    public function testRowsTooShortToJudge(): void
    {
        $quick = self::row(['mode' => 'coroutine', 'workers' => 1, 'concurrency' => 1000],
            ['requests' => 352, 'connections' => 1000, 'duration_s' => 2.01, 'rps' => 175.12, 'p99_ms' => 1930.0, 'errors' => ['no_answer' => 648]]);
        self::assertSame('too short to judge: 352 answers over 1,000 connections (under 2 per connection; at least 648 never got one)', RunLength::tooShort($quick));

        // Enough answers, but a tail a third of the run long: the run's length bounds it.
        $tail = self::row(['mode' => 'sync', 'workers' => 2, 'concurrency' => 100], ['requests' => 5000, 'duration_s' => 2.0, 'p99_ms' => 700.0]);
        self::assertSame('too short to judge: p99 700 ms is over a third of the 2.0 s run', RunLength::tooShort($tail));

        // Exactly two answers per connection and a p99 of a third of the run are enough.
        $edge = self::row(['mode' => 'sync', 'workers' => 2, 'concurrency' => 100], ['requests' => 200, 'duration_s' => 3.0, 'p99_ms' => 1000.0]);
        self::assertNull(RunLength::tooShort($edge));
        $hello = self::row(['mode' => 'coroutine', 'workers' => 1, 'concurrency' => 100], ['requests' => 171240, 'connections' => 100, 'duration_s' => 2.01, 'p99_ms' => 2.99]);
        self::assertNull(RunLength::tooShort($hello));

        // Rows that did not run, and rows without these figures (line protocol), are not classified.
        $failed = new Row('hello', ['concurrency' => 1000]);
        $failed->fail('server did not start');
        self::assertNull(RunLength::tooShort($failed));
        self::assertNull(RunLength::tooShort(self::row(['pattern' => 'many', 'workers' => 1], ['messages' => 10, 'rps' => 5.0], 'line')));

        self::assertSame([$edge, $hello], RunLength::judgeable([$quick, $edge, $tail, $hello, ]));
        self::assertSame([$quick, $tail], RunLength::tooShortRows([$quick, $edge, $tail, $hello]));
        self::assertSame(RunLength::tooShort($quick), $quick->toArray()['too_short']);
        self::assertNull($hello->toArray()['too_short']);
    }

    public function testAFailingVerdictNamesItsRows(): void
    {
        $scenario = new SleepScenario(new Settings());
        $rows = [
            self::row(['mode' => 'sync', 'loop' => 'select', 'workers' => 2, 'concurrency' => 100], ['rps' => 195.0, 'cpu_pct' => 3.0]),
            self::row(['mode' => 'sync', 'loop' => 'select', 'workers' => 8, 'concurrency' => 100], ['rps' => 190.0, 'cpu_pct' => 3.0]),
            self::row(['mode' => 'sync', 'loop' => 'select', 'workers' => 8, 'concurrency' => 1000], ['rps' => 120.0, 'cpu_pct' => 3.0]),
        ];
        $sync = $scenario->checks($rows)[1];
        self::assertFalse($sync->holds);
        self::assertSame(['sync select w=8 c=100', 'sync select w=8 c=1000'], $sync->failing, 'the 2-worker row reaches its bound; the 8-worker rows do not');
        self::assertSame(['sync select w=8 c=100', 'sync select w=8 c=1000'], $sync->toArray()['failing']);

        $text = ReportWriter::verdicts([$sync]);
        self::assertStringContainsString('❌ **does not hold** (failing: sync select w=8 c=100; sync select w=8 c=1000) — sync mode near', $text);

        $upstream = new UpstreamScenario(new Settings(quick: true));
        $good = self::row(['mode' => 'coroutine', 'loop' => 'select', 'workers' => 2, 'concurrency' => 100, 'delay' => 1.0], ['rps' => 74.6, 'bound_rps' => 75.0]);
        $bad = self::row(['mode' => 'coroutine', 'loop' => 'epoll', 'workers' => 2, 'concurrency' => 100, 'delay' => 1.0], ['rps' => 74.6, 'bound_rps' => 75.0]);
        $bad->metrics['errors']['timeout'] = 3;
        $check = $upstream->checks([$good, $bad])[0];
        self::assertFalse($check->holds);
        self::assertSame([$bad->label()], $check->failing);
    }

    public function testEveryRowCheckAndTheRowsLeftOut(): void
    {
        $a = self::row(['mode' => 'sync', 'concurrency' => 10], ['rps' => 100.0]);
        $b = self::row(['mode' => 'coroutine', 'concurrency' => 10], ['rps' => 50.0]);
        $check = Check::everyRow('at least 80 req/s', [$a, $b], static fn (Row $r): bool => $r->number('rps') >= 80, 'measured');
        self::assertFalse($check->holds);
        self::assertSame(['coroutine c=10'], $check->failing);
        self::assertTrue(Check::everyRow('at least 40 req/s', [$a, $b], static fn (Row $r): bool => $r->number('rps') >= 40, 'measured')->holds);
        self::assertNull(Check::everyRow('anything', [], static fn (Row $r): bool => true, '')->holds);

        $short = self::row(['mode' => 'coroutine', 'workers' => 1, 'concurrency' => 1000], ['requests' => 352, 'duration_s' => 2.01, 'p99_ms' => 1930.0, 'errors' => ['no_answer' => 648]]);
        $text = ReportWriter::verdicts([new Check('holds', true, 'fine')], [$short]);
        self::assertStringContainsString('✅ **holds** — holds: fine.', $text);
        self::assertStringContainsString('Left out of these verdicts, too short to judge', $text);
        self::assertStringContainsString('coroutine w=1 c=1000 (352 answers over 1,000 connections (under 2 per connection; at least 648 never got one))', $text);
    }
}
