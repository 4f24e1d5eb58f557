<?php

declare(strict_types=1);

namespace Symfony\Component\Clock;

/** The system clock, which nesbot/carbon uses for now() and sleep() (see ../composer.json). */
final class NativeClock implements ClockInterface
{
    private \DateTimeZone $timezone;

    public function __construct(\DateTimeZone|string|null $timezone = null)
    {
        $this->timezone = $timezone instanceof \DateTimeZone ? $timezone : new \DateTimeZone($timezone ?? date_default_timezone_get());
    }

    public function now(): \DateTimeImmutable
    {
        return new \DateTimeImmutable('now', $this->timezone);
    }

    public function sleep(float|int $seconds): void
    {
        if ($seconds > 0) {
            usleep((int) round($seconds * 1e6));
        }
    }

    public function withTimeZone(\DateTimeZone|string $timezone): static
    {
        return new static($timezone);
    }
}
