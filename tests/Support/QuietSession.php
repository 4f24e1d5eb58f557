<?php

declare(strict_types=1);

namespace Weft\Tests\Support;

use Weft\Server\Session;

/**
 * A Session that takes no part: idle, always willing to read, never timed out, and every callback a
 * no-op. Tests of the connection layer extend it with the one or two callbacks they watch.
 */
abstract class QuietSession implements Session
{
    public function received(string $bytes): void
    {
    }

    public function ended(): void
    {
    }

    public function phase(): int
    {
        return self::IDLE;
    }

    public function wantsInput(): bool
    {
        return true;
    }

    public function timedOut(): ?string
    {
        return null;
    }

    public function resume(): void
    {
    }

    public function closed(): void
    {
    }

    public function serve(mixed $request): void
    {
    }

    public function describe(mixed $request): string
    {
        return '-';
    }
}
