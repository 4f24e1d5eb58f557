<?php

declare(strict_types=1);

namespace Weft\Loop;

/** Picks a loop backend: "auto" (epoll when the weft extension is loaded, else select), "select" or "epoll". */
final class DriverFactory
{
    public const BACKENDS = ['auto', 'select', 'epoll'];

    public static function create(?string $backend = null): Driver
    {
        $backend ??= (\getenv('WEFT_LOOP') ?: 'auto');
        return match ($backend) {
            'select' => new StreamSelectDriver(),
            'epoll' => self::epoll() ?? throw new \RuntimeException(
                'The epoll loop needs the weft native extension (ext/), which is not loaded; use --loop select',
            ),
            'auto' => self::epoll() ?? new StreamSelectDriver(),
            default => throw new \InvalidArgumentException(
                "Unknown loop backend '$backend' (expected one of: " . \implode(', ', self::BACKENDS) . ')',
            ),
        };
    }

    public static function epollAvailable(): bool
    {
        return \class_exists(EpollDriver::class) && EpollDriver::isSupported();
    }

    private static function epoll(): ?Driver
    {
        return self::epollAvailable() ? new EpollDriver() : null;
    }
}
