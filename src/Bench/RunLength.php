<?php

declare(strict_types=1);

namespace Weft\Bench;

use Weft\Bench\Report\Format;

/**
 * Whether a load row ran long enough for its figures to be judged. A closed-loop client (wrk) keeps
 * every connection busy with one request at a time and cuts them all off when the time is up; when the
 * run is short against the server's answers, what it reports is the run, not the server:
 *
 * - fewer than MIN_ANSWERS_PER_CONNECTION completed requests per open connection: most connections got
 *   one answer or none (a 2 s run at 1,000 connections with 352 answers), so the percentiles describe the
 *   start of the run and the cut-off at its end, and the rate includes the connections' start-up;
 * - a p99 longer than MAX_P99_SHARE of the run: the tail is as long as the run allows, so it is bounded
 *   by the duration rather than measured (the same 2 s run had a p99 of ~1.9 s).
 *
 * Such a row keeps its figures in the tables, marked, and the report's verdicts leave it out (it is
 * neither a pass nor a failure). Rows without these figures (line protocol, core benchmarks) are judged
 * as they are.
 */
final class RunLength
{
    public const MIN_ANSWERS_PER_CONNECTION = 2;
    public const MAX_P99_SHARE = 1 / 3;

    /** Why the row is too short to judge, or null when it is not (or has no such figures). */
    public static function tooShort(Row $row): ?string
    {
        if (!$row->isOk()) {
            return null;
        }
        $requests = $row->number('requests');
        $connections = $row->number('connections') ?? (\is_numeric($row->param('concurrency')) ? (float) $row->param('concurrency') : null);
        if ($requests !== null && $connections !== null && $connections > 0 && $requests < self::MIN_ANSWERS_PER_CONNECTION * $connections) {
            $noAnswer = (int) ($row->metric('errors')['no_answer'] ?? 0);
            return \sprintf(
                'too short to judge: %s answers over %s connections (under %d per connection%s)',
                Format::number($requests, 0), Format::number($connections, 0), self::MIN_ANSWERS_PER_CONNECTION,
                $noAnswer > 0 ? \sprintf('; at least %s never got one', Format::number($noAnswer, 0)) : '',
            );
        }
        $p99 = $row->number('p99_ms');
        $duration = $row->number('duration_s');
        if ($p99 !== null && $duration !== null && $duration > 0 && $p99 / 1000 > self::MAX_P99_SHARE * $duration) {
            return \sprintf('too short to judge: p99 %s ms is over a third of the %s s run', Format::ms($p99), Format::number($duration, 1));
        }
        return null;
    }

    /** @param list<Row> $rows @return list<Row> the rows a verdict may use: all but those too short to judge */
    public static function judgeable(array $rows): array
    {
        return \array_values(\array_filter($rows, static fn (Row $r): bool => self::tooShort($r) === null));
    }

    /** @param list<Row> $rows @return list<Row> */
    public static function tooShortRows(array $rows): array
    {
        return \array_values(\array_filter($rows, static fn (Row $r): bool => self::tooShort($r) !== null));
    }
}
