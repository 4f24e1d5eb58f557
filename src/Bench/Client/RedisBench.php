<?php

declare(strict_types=1);

namespace Weft\Bench\Client;

use Weft\Client\Redis\Config;
use Weft\Client\Redis\Connection;

/**
 * GET and SET per second over one connection with Weft's Redis client, one command at a time from one
 * coroutine (latency-bound) and pipelined 16 at a time, plus the same client in sync mode; and, for
 * comparison, `redis-benchmark -c 1 -P 1` and `-P 16` (hiredis, in C) against the same server with the
 * same 3-byte value. Variants run in interleaved rounds so that a noisy machine disturbs all of them
 * alike; each figure is the median round. Ratios are Weft / redis-benchmark.
 */
final class RedisBench
{
    private const ROUNDS = 3;
    private const BATCH = 16;
    /** redis-benchmark's default value size (-d 3). */
    private const VALUE = 'xxx';

    /**
     * @return array{
     *   weft_set_ops: float, weft_get_ops: float, weft_set_pipelined_ops: float, weft_get_pipelined_ops: float,
     *   weft_sync_set_ops: float, weft_sync_get_ops: float,
     *   redis_benchmark_set_ops: ?float, redis_benchmark_get_ops: ?float,
     *   redis_benchmark_set_pipelined_ops: ?float, redis_benchmark_get_pipelined_ops: ?float,
     *   ratio_set: ?float, ratio_get: ?float, ratio_set_pipelined: ?float, ratio_get_pipelined: ?float,
     *   batch: int, seconds: float, rounds: int, server: string, redis_benchmark: string
     * }
     */
    public static function run(string $url, float $seconds): array
    {
        if ($seconds <= 0) {
            throw new \InvalidArgumentException('The duration must be positive');
        }
        $config = Config::fromUrl($url);
        $connection = Connection::connect($config);
        $key = 'weft:bench:' . \getmypid();
        $value = self::VALUE;
        $keys = \array_fill(0, self::BATCH, $key);

        $variants = [
            'weft_set_ops' => [true, 1, static fn (): mixed => $connection->set($key, $value)],
            'weft_get_ops' => [true, 1, static fn (): mixed => $connection->get($key)],
            'weft_set_pipelined_ops' => [true, self::BATCH, static fn (): mixed => $connection->pipeline(static function ($pipe) use ($keys, $value): void {
                foreach ($keys as $k) {
                    $pipe->set($k, $value);
                }
            })],
            'weft_get_pipelined_ops' => [true, self::BATCH, static fn (): mixed => $connection->pipeline(static function ($pipe) use ($keys): void {
                foreach ($keys as $k) {
                    $pipe->get($k);
                }
            })],
            'weft_sync_set_ops' => [false, 1, static fn (): mixed => $connection->set($key, $value)],
            'weft_sync_get_ops' => [false, 1, static fn (): mixed => $connection->get($key)],
        ];
        $benchmark = self::findRedisBenchmark();
        // Slices: one per Weft variant, two per redis-benchmark run (it does SET, then GET).
        $slice = $seconds / (self::ROUNDS * (\count($variants) + ($benchmark === null ? 0 : 4)));

        $figures = \array_fill_keys(\array_keys($variants), []);
        $external = [];
        for ($round = 0; $round < self::ROUNDS; $round++) {
            foreach ($variants as $name => [$inCoroutine, $perCall, $call]) {
                $figures[$name][] = $inCoroutine
                    ? \Weft\run(static fn (): float => self::measure($call, $perCall, $slice))
                    : self::measure($call, $perCall, $slice);
            }
            if ($benchmark !== null) {
                foreach ([1, self::BATCH] as $pipeline) {
                    // Enough requests for about one slice per command, judged by our own rate.
                    $rate = \end($figures[$pipeline === 1 ? 'weft_get_ops' : 'weft_get_pipelined_ops']);
                    $requests = (int) \max(10_000, \min(5_000_000, $rate * $slice * ($pipeline === 1 ? 1.5 : 3)));
                    foreach (self::redisBenchmark($benchmark, $config, $pipeline, $requests) as $command => $ops) {
                        $external[$pipeline === 1 ? "redis_benchmark_{$command}_ops" : "redis_benchmark_{$command}_pipelined_ops"][] = $ops;
                    }
                }
            }
        }
        $server = (string) ($connection->command('INFO', 'server') ?? '');
        $connection->command('DEL', $key);
        $connection->close();

        $result = [];
        foreach ($figures + $external as $name => $values) {
            $result[$name] = self::median($values);
        }
        foreach (['set', 'get', 'set_pipelined', 'get_pipelined'] as $what) {
            $result["redis_benchmark_{$what}_ops"] ??= null;
        }
        foreach (['set', 'get', 'set_pipelined', 'get_pipelined'] as $what) {
            $theirs = $result["redis_benchmark_{$what}_ops"];
            $result["ratio_$what"] = $theirs === null ? null : \round($result["weft_{$what}_ops"] / $theirs, 3);
        }
        $result['batch'] = self::BATCH;
        $result['seconds'] = $seconds;
        $result['rounds'] = self::ROUNDS;
        $result['server'] = \preg_match('/redis_version:(\S+)/', $server, $m) ? 'Redis ' . $m[1] : 'Redis';
        $result['redis_benchmark'] = $benchmark ?? 'not installed (Debian package redis-tools)';
        return $result;
    }

    /**
     * Runs `redis-benchmark -t set,get -c 1 -P $pipeline -q -n $requests` and returns its requests per
     * second by command.
     *
     * @return array<string, float> ['set' => ..., 'get' => ...]
     */
    public static function redisBenchmark(string $binary, Config $config, int $pipeline, int $requests): array
    {
        $command = [$binary];
        if ($config->socketPath !== null) {
            \array_push($command, '-s', $config->socketPath);
        } else {
            \array_push($command, '-h', $config->host, '-p', (string) $config->port);
        }
        if ($config->password !== null) {
            if ($config->username !== null) {
                \array_push($command, '--user', $config->username);
            }
            \array_push($command, '-a', $config->password);
        }
        if ($config->database !== 0) {
            \array_push($command, '--dbnum', (string) $config->database);
        }
        \array_push($command, '-t', 'set,get', '-P', (string) $pipeline, '-q', '-c', '1', '-n', (string) $requests, '-d', (string) \strlen(self::VALUE));
        if ($config->protocol === 3) {
            \array_push($command, '-3');
        }

        $process = \proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        if (!\is_resource($process)) {
            throw new \RuntimeException('Cannot run ' . $binary);
        }
        $output = (string) \stream_get_contents($pipes[1]);
        $errors = (string) \stream_get_contents($pipes[2]);
        \fclose($pipes[1]);
        \fclose($pipes[2]);
        $exit = \proc_close($process);
        $figures = self::parseRedisBenchmark($output);
        if ($exit !== 0 || !isset($figures['set'], $figures['get'])) {
            throw new \RuntimeException(\sprintf(
                "redis-benchmark failed (exit %d): %s",
                $exit,
                \trim($errors . "\n" . $output),
            ));
        }
        return $figures;
    }

    /**
     * The final "SET: 64935.07 requests per second, p50=0.015 msec" lines of `redis-benchmark -q`
     * (progress lines before them are separated by carriage returns).
     *
     * @return array<string, float> lower-case command => requests per second
     */
    public static function parseRedisBenchmark(string $output): array
    {
        $figures = [];
        foreach (\preg_split('/[\r\n]+/', $output) ?: [] as $line) {
            if (\preg_match('/^\s*"?([A-Z]+)"?:\s*([0-9.]+) requests per second/', $line, $m)) {
                $figures[\strtolower($m[1])] = (float) $m[2];
            }
        }
        return $figures;
    }

    private static function findRedisBenchmark(): ?string
    {
        $dirs = [...\explode(':', (string) \getenv('PATH')), '/usr/bin', '/usr/local/bin'];
        foreach ($dirs as $dir) {
            if ($dir !== '' && \is_file("$dir/redis-benchmark") && \is_executable("$dir/redis-benchmark")) {
                return "$dir/redis-benchmark";
            }
        }
        return null;
    }

    /** Calls $call for about $seconds and returns operations ($perCall each) per second. */
    private static function measure(\Closure $call, int $perCall, float $seconds): float
    {
        $start = \hrtime(true);
        $until = $start + (int) ($seconds * 1e9);
        $count = 0;
        do {
            // Check the clock every 50 calls: hrtime() is cheap but not free.
            for ($i = 0; $i < 50; $i++) {
                $call();
            }
            $count += 50;
            $now = \hrtime(true);
        } while ($now < $until);
        return $count * $perCall / (($now - $start) / 1e9);
    }

    /** @param list<float> $values */
    private static function median(array $values): float
    {
        \sort($values);
        return \round($values[\intdiv(\count($values), 2)], 1);
    }
}
