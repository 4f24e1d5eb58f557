<?php

declare(strict_types=1);

namespace Weft\Loop;

/**
 * The process's event loop: the one piece of static state in Weft. A forked worker calls reset() so it
 * never shares a driver (or its descriptors and timers) with its parent.
 */
final class Loop
{
    private static ?Driver $driver = null;

    public static function get(): Driver
    {
        return self::$driver ??= DriverFactory::create();
    }

    public static function set(Driver $driver): void
    {
        self::$driver = $driver;
    }

    /** Drops the current driver; the next get() builds a fresh one (call after fork). */
    public static function reset(?string $backend = null): Driver
    {
        self::$driver = DriverFactory::create($backend);
        return self::$driver;
    }

    public static function run(): void
    {
        self::get()->run();
    }

    public static function defer(\Closure $callback): string
    {
        return self::get()->defer($callback);
    }

    public static function delay(float $seconds, \Closure $callback): string
    {
        return self::get()->delay($seconds, $callback);
    }

    public static function repeat(float $interval, \Closure $callback): string
    {
        return self::get()->repeat($interval, $callback);
    }

    public static function cancel(string $id): void
    {
        self::get()->cancel($id);
    }
}
