<?php

declare(strict_types=1);

namespace Weft\Bench\Core;

use Weft\Hook\Hooks;

use function Weft\run;

/**
 * The cost of the extension's hooks on unchanged client code (issue 10): PDO point selects or phpredis
 * GETs, one after the other in one coroutine, with the hooks on and with them off, in interleaved rounds
 * in one process (so both see the same machine load), each round on a fresh connection. Each query of the
 * hooks-on rounds that would block goes through the hook and the loop; the median of the rounds' ratios
 * on/off is what that costs, and the process's CPU per query on each side says where it went.
 *
 * @internal bin/weft bench _core hook-pdo|hook-redis (a child of `bench core`)
 */
final class HookOverhead
{
    public const ROUNDS = 6;

    /** @return array<string, mixed> */
    public static function run(string $client, string $url, int $queries, int $rounds = self::ROUNDS): array
    {
        if (!Hooks::isSupported()) {
            throw new \RuntimeException('the hooks need the weft extension (bash scripts/build-ext.sh)');
        }
        if ($client !== 'pdo' && $client !== 'redis') {
            throw new \InvalidArgumentException("hook overhead: unknown client '$client' (pdo or redis)");
        }
        $seconds = ['on' => 0.0, 'off' => 0.0];
        $cpu = ['on' => 0.0, 'off' => 0.0];
        $ratios = [];
        $rounds = \max(2, $rounds);
        for ($round = 0; $round < $rounds; $round++) {
            // Alternate which side goes first, so a load change in the middle hurts both alike.
            $order = $round % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
            $took = [];
            foreach ($order as $side) {
                if ($side === 'on') {
                    Hooks::enable(Hooks::KINDS['stream']);
                } else {
                    Hooks::disable();
                }
                [$wall, $used] = run(static function () use ($client, $url, $queries): array {
                    // A connection of its own per side and round, opened with the hooks as they are now
                    // (a stream is hooked or not from its opening); the connect is not timed.
                    $query = $client === 'pdo' ? self::pdo($url) : self::redis($url);
                    $cpu = self::cpuSeconds();
                    $start = \hrtime(true);
                    for ($i = 0; $i < $queries; $i++) {
                        $query($i);
                    }
                    return [(\hrtime(true) - $start) / 1e9, self::cpuSeconds() - $cpu];
                });
                $took[$side] = $wall;
                $seconds[$side] += $wall;
                $cpu[$side] += $used;
            }
            $ratios[] = $took['off'] / $took['on'];
        }
        Hooks::disable();
        // The verdict is the median of the rounds' own ratios: each pair ran back to back, so a round
        // in which the database was scheduled badly (it is not pinned) moves one ratio, not the total.
        \sort($ratios);
        $middle = \intdiv(\count($ratios), 2);
        $median = \count($ratios) % 2 === 1 ? $ratios[$middle] : ($ratios[$middle - 1] + $ratios[$middle]) / 2;
        $total = $queries * $rounds;
        return [
            'ratio' => $median,
            'ratio_of_totals' => ($total / $seconds['on']) / ($total / $seconds['off']),
            'round_ratios' => \array_map(static fn (float $r): float => \round($r, 3), $ratios),
            'hooks_on_qps' => $total / $seconds['on'],
            'hooks_off_qps' => $total / $seconds['off'],
            'queries_per_side' => $total,
            'rounds' => $rounds,
            'extra_us_per_query' => ($seconds['on'] - $seconds['off']) / $total * 1e6,
            'cpu_us_per_query_on' => $cpu['on'] / $total * 1e6,
            'cpu_us_per_query_off' => $cpu['off'] / $total * 1e6,
        ];
    }

    private static function cpuSeconds(): float
    {
        $usage = \getrusage();
        return $usage['ru_utime.tv_sec'] + $usage['ru_stime.tv_sec'] + ($usage['ru_utime.tv_usec'] + $usage['ru_stime.tv_usec']) / 1e6;
    }

    /** @return \Closure(int): void */
    private static function pdo(string $url): \Closure
    {
        $p = \parse_url($url) ?: [];
        $pdo = new \PDO(
            \sprintf('mysql:host=%s;port=%d;dbname=%s', $p['host'] ?? '127.0.0.1', $p['port'] ?? 3306, \ltrim($p['path'] ?? '/weft', '/')),
            \urldecode($p['user'] ?? ''),
            \urldecode($p['pass'] ?? ''),
            [\PDO::ATTR_ERRMODE => \PDO::ERRMODE_EXCEPTION],
        );
        $select = $pdo->prepare('SELECT ? AS id');
        return static function (int $i) use ($select): void {
            $select->execute([$i]);
            if ((int) $select->fetchColumn() !== $i) {
                throw new \RuntimeException('PDO point select returned the wrong row');
            }
        };
    }

    /** @return \Closure(int): void */
    private static function redis(string $url): \Closure
    {
        if (!\class_exists(\Redis::class)) {
            throw new \RuntimeException('phpredis is not loaded (Debian: php8.2-redis)');
        }
        $p = \parse_url($url) ?: [];
        $redis = new \Redis();
        $redis->connect($p['host'] ?? '127.0.0.1', (int) ($p['port'] ?? 6379), 5.0);
        $redis->set('weft:bench:hook', 'v');
        return static function (int $i) use ($redis): void {
            if ($redis->get('weft:bench:hook') !== 'v') {
                throw new \RuntimeException('Redis GET returned the wrong value');
            }
        };
    }
}
