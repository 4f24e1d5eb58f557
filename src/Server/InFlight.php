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

    /** @var array<int, array{request: string, since: float}> by token, oldest first */
    private static array $running = [];
    /** @var null|\Closure(int): list<array{request: string, since: float}> */
    private static ?\Closure $source = null;
    private static int $next = 0;

    /** @return int a token for end() */
    public static function start(string $method, string $target): int
    {
        $token = ++self::$next;
        // Bounded: a target can be as long as --max-header.
        self::$running[$token] = ['request' => $method . ' ' . (\strlen($target) > 200 ? \substr($target, 0, 200) . '...' : $target), 'since' => \microtime(true)];
        return $token;
    }

    public static function end(int $token): void
    {
        unset(self::$running[$token]);
    }

    /** @return list<array{request: string, since: float}> oldest first, at most REPORTED */
    public static function oldest(int $count = self::REPORTED): array
    {
        if (self::$source !== null) {
            return (self::$source)($count);
        }
        return \array_slice(\array_values(self::$running), 0, $count);
    }

    /** A fresh process (after fork) runs nothing yet. */
    public static function reset(): void
    {
        self::$running = [];
        self::$source = null;
    }

    /**
     * Where the requests in flight are kept instead (the server core's Dispatcher, which tracks them
     * without building a description per request).
     *
     * @param null|\Closure(int): list<array{request: string, since: float}> $source
     */
    public static function from(?\Closure $source): void
    {
        self::$source = $source;
    }
}
