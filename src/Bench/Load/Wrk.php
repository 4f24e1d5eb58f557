<?php

declare(strict_types=1);

namespace Weft\Bench\Load;

/** Command lines for wrk and ab, and the Lua script of the "varied requests" variant. */
final class Wrk
{
    /** Long enough that multi-second tails show as latency, not as timeouts. */
    public const TIMEOUT = 10;

    /** @return list<string> */
    public static function command(string $wrk, string $url, int $concurrency, float $seconds, ?string $script = null, int $timeout = self::TIMEOUT): array
    {
        // wrk takes whole seconds only.
        $command = [$wrk, '-t1', "-c$concurrency", '-d' . \max(1, (int) \round($seconds)) . 's', '--latency', "--timeout", "{$timeout}s"];
        if ($script !== null) {
            $command[] = '-s';
            $command[] = $script;
        }
        $command[] = $url;
        return $command;
    }

    /** @return list<string> */
    public static function abCommand(string $ab, string $url, int $concurrency, float $seconds, int $timeout = self::TIMEOUT): array
    {
        // -t alone would stop at 50,000 requests: -n sets a count high enough for the time to end the run.
        return [$ab, '-k', '-q', '-c', (string) $concurrency, '-t', (string) \max(1, (int) \round($seconds)), '-n', '100000000', '-s', (string) $timeout, $url];
    }

    /**
     * A wrk script where every request differs from the one before: its path, its query string and the
     * value of one header, as a real client's would; the server cannot answer from any cache of its own.
     */
    public static function variedScript(): string
    {
        return <<<'LUA'
            -- Written by bin/weft bench: every request gets its own path, query and one header value.
            local counter = 0
            local sections = { "users", "orders", "products", "search", "cart" }

            request = function()
              counter = counter + 1
              local section = sections[(counter % #sections) + 1]
              local path = "/" .. section .. "/" .. (counter % 1000) .. "?page=" .. (counter % 17) .. "&q=item" .. counter
              wrk.headers["X-Request-Id"] = "bench-" .. counter
              return wrk.format("GET", path)
            end

            LUA;
    }
}
