<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Mode\Fpm;

use Weft\Mode\Fpm\SapiOutput;

/** The SAPI as a list of what was sent, in order: the CLI has no headers to inspect. */
final class RecordingOutput implements SapiOutput
{
    /** @var list<array{0: string, 1: mixed}> */
    public array $events = [];

    public function status(int $status, string $reason): void
    {
        $this->events[] = ['status', $reason === '' ? $status : "$status $reason"];
    }

    public function header(string $line): void
    {
        $this->events[] = ['header', $line];
    }

    public function write(string $bytes): void
    {
        $this->events[] = ['write', $bytes];
    }

    public function flush(): void
    {
        $this->events[] = ['flush', null];
    }

    public function sentStatus(): int|string|null
    {
        foreach ($this->events as [$kind, $value]) {
            if ($kind === 'status') {
                return $value;
            }
        }
        return null;
    }

    /** @return list<string> */
    public function headers(): array
    {
        return \array_values(\array_map(static fn (array $e): string => $e[1], \array_filter($this->events, static fn (array $e): bool => $e[0] === 'header')));
    }

    public function body(): string
    {
        $body = '';
        foreach ($this->events as [$kind, $value]) {
            if ($kind === 'write') {
                $body .= $value;
            }
        }
        return $body;
    }
}
