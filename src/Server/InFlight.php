<?php

declare(strict_types=1);

namespace Weft\Server;

/**
 * The requests this worker is running, for the master: each stats message carries the oldest few as
 * `running`, so that when a worker stops answering the log can say what it was doing, and a fatal
 * error (memory limit) can name its request.
 *
 * @internal
 */
final class InFlight
{
    /** How many a stats message carries. */
    public const REPORTED = 3;

    /** @var null|\Closure(int): list<array{request: string, since: float}> */
    private static ?\Closure $source = null;
    /** @var null|\Closure(): int answers the requests in flight when the worker dies of a fatal error */
    private static ?\Closure $abandon = null;
    /** @var null|\Closure(): ?string the request of the coroutine running now */
    private static ?\Closure $current = null;

    /** @return list<array{request: string, since: float}> oldest first, at most REPORTED */
    public static function oldest(int $count = self::REPORTED): array
    {
        return self::$source === null ? [] : (self::$source)($count);
    }

    /** A fresh process (after fork) runs nothing yet. */
    public static function reset(): void
    {
        self::$source = null;
        self::$abandon = null;
        self::$current = null;
    }

    /**
     * @param null|\Closure(): int $abandon the Dispatcher's abandonAll()
     * @param null|\Closure(): ?string $current the Dispatcher's currentRequest()
     */
    public static function onFatal(?\Closure $abandon, ?\Closure $current = null): void
    {
        self::$abandon = $abandon;
        self::$current = $current;
    }

    /** The request whose code runs now (a fatal error's), when known. */
    public static function current(): ?string
    {
        return self::$current === null ? null : (self::$current)();
    }

    /** The worker dies of a fatal error: answer what can still be answered. @return int how many */
    public static function abandon(): int
    {
        $abandon = self::$abandon;
        self::$abandon = null;
        return $abandon === null ? 0 : $abandon();
    }

    /**
     * Where the requests in flight are kept (the server core's Dispatcher, which tracks them without
     * building a description per request).
     *
     * @param null|\Closure(int): list<array{request: string, since: float}> $source
     */
    public static function from(?\Closure $source): void
    {
        self::$source = $source;
    }
}
