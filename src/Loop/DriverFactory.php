<?php

declare(strict_types=1);

namespace Weft\Loop;

/**
 * Picks a loop backend: "auto" (epoll when the weft extension is loaded, else select), "select" or "epoll".
 * "epoll" is the native loop (NativeDriver: the extension's loop, dispatching in C); "select" is the
 * pure-PHP loop, the one that works everywhere.
 */
final class DriverFactory
{
    public const BACKENDS = ['auto', 'select', 'epoll'];

    /** @throws NativeLoopMissing for "epoll" without the extension */
    public static function create(?string $backend = null): Driver
    {
        $backend ??= (\getenv('WEFT_LOOP') ?: 'auto');
        return match ($backend) {
            'select' => new StreamSelectDriver(),
            'epoll' => self::epoll() ?? throw NativeLoopMissing::create(),
            'auto' => self::epoll() ?? new StreamSelectDriver(),
            default => throw new \InvalidArgumentException(
                "Unknown loop backend '$backend' (expected one of: " . \implode(', ', self::BACKENDS) . ')',
            ),
        };
    }

    /** The backend create($backend) gives, by the name its driver reports (Driver::name()): "auto" resolved. */
    public static function resolve(?string $backend = null): string
    {
        $backend ??= (\getenv('WEFT_LOOP') ?: 'auto');
        return $backend === 'auto' ? (self::epollAvailable() ? 'epoll' : 'select') : $backend;
    }

    public static function epollAvailable(): bool
    {
        // Checked before NativeDriver is loaded: the class extends the extension's and cannot load without it.
        return \class_exists(\Weft\Ext\Loop::class, false);
    }

    private static function epoll(): ?Driver
    {
        return self::epollAvailable() ? new NativeDriver() : null;
    }
}
