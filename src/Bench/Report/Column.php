<?php

declare(strict_types=1);

namespace Weft\Bench\Report;

use Weft\Bench\Row;

/** One column of a scenario's table: a header and how a row's cell reads. */
final class Column
{
    /** @param \Closure(Row): string $cell */
    public function __construct(
        public readonly string $header,
        public readonly \Closure $cell,
        public readonly bool $numeric = true,
    ) {
    }

    public static function param(string $header, string $param): self
    {
        return new self($header, static fn (Row $row): string => (string) ($row->param($param) ?? Format::NONE), false);
    }

    /** The columns every HTTP row has, in the order of the list in docs/benchmarks.md (How every row is measured). @return list<self> */
    public static function http(string $rateHeader = 'req/s'): array
    {
        return [
            new self($rateHeader, static fn (Row $r): string => Format::rate($r->number('rps'))),
            new self('p50 ms', static fn (Row $r): string => Format::ms($r->number('p50_ms'))),
            new self('p90 ms', static fn (Row $r): string => Format::ms($r->number('p90_ms'))),
            new self('p99 ms', static fn (Row $r): string => Format::ms($r->number('p99_ms'))),
            new self('max ms', static fn (Row $r): string => Format::ms($r->number('max_ms'))),
            new self('errors', static fn (Row $r): string => $r->isOk() ? Format::errors($r->metric('errors')) : Format::NONE, false),
            ...self::server(),
        ];
    }

    /** Server-side columns: CPU and the memory of all the server's processes. @return list<self> */
    public static function server(): array
    {
        return [
            new self('CPU %', static fn (Row $r): string => Format::pct($r->number('cpu_pct'))),
            new self('CPU µs/req', static fn (Row $r): string => Format::number($r->number('cpu_us_per_req'))),
            new self('RSS total', static fn (Row $r): string => Format::bytes($r->number('rss_bytes'))),
            new self('PSS total', static fn (Row $r): string => Format::bytes($r->number('pss_bytes'))),
            new self('procs', static fn (Row $r): string => Format::number($r->number('processes'), 0)),
        ];
    }

    public static function status(): self
    {
        return new self('note', static function (Row $r): string {
            return match ($r->status) {
                Row::OK => \implode('; ', $r->notes),
                Row::PENDING => 'not run',
                default => $r->status . ': ' . $r->reason,
            };
        }, false);
    }
}
