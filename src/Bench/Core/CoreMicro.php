<?php

declare(strict_types=1);

namespace Weft\Bench\Core;

use Weft\Coroutine\Channel;
use Weft\Coroutine\WaitGroup;

use function Weft\go;
use function Weft\run;
use function Weft\sleep;

/**
 * The core micro benchmarks. Each runs in a fresh child process (bin/weft bench _core NAME), so that
 * peak memory and JIT warm-up belong to that benchmark alone, and returns its figures.
 */
final class CoreMicro
{
    /**
     * Spawn and finish $count coroutines that return at once, $batches times; the median batch gives
     * the time per coroutine.
     *
     * @return array<string, mixed>
     */
    public static function spawn(int $count = 1_000_000, int $batches = 5): array
    {
        $times = [];
        $noop = static function (): void {
        };
        for ($b = 0; $b < $batches; $b++) {
            $times[] = run(static function () use ($count, $noop): float {
                $start = \hrtime(true);
                for ($i = 0; $i < $count; $i++) {
                    go($noop);
                }
                return (\hrtime(true) - $start) / 1e9;
            });
        }
        \sort($times);
        $median = $times[\intdiv(\count($times), 2)];
        return [
            'coroutines' => $count,
            'batches' => $batches,
            'batch_seconds' => $times,
            'median_seconds' => $median,
            'us_per_coroutine' => $median / $count * 1e6,
        ];
    }

    /**
     * $count coroutines each sleep $seconds at the same time: the wall time of the whole, and the peak
     * RSS of this (fresh) process.
     *
     * @return array<string, mixed>
     */
    public static function sleepers(int $count = 10_000, float $seconds = 1.0): array
    {
        $wall = run(static function () use ($count, $seconds): float {
            $start = \hrtime(true);
            $wg = new WaitGroup();
            for ($i = 0; $i < $count; $i++) {
                $wg->add();
                go(static function () use ($wg, $seconds): void {
                    sleep($seconds);
                    $wg->done();
                });
            }
            $wg->wait();
            return (\hrtime(true) - $start) / 1e9;
        });
        return [
            'coroutines' => $count,
            'sleep_seconds' => $seconds,
            'wall_seconds' => $wall,
            'peak_rss_bytes' => self::peakRss(),
            'peak_php_memory_bytes' => \memory_get_peak_usage(true),
        ];
    }

    /**
     * Two coroutines pass a value back and forth over two unbuffered channels; every send is one
     * message.
     *
     * @return array<string, mixed>
     */
    public static function pingPong(int $roundTrips = 500_000): array
    {
        $elapsed = run(static function () use ($roundTrips): float {
            $ping = new Channel();
            $pong = new Channel();
            go(static function () use ($ping, $pong, $roundTrips): void {
                for ($i = 0; $i < $roundTrips; $i++) {
                    $pong->send($ping->receive());
                }
            });
            $start = \hrtime(true);
            for ($i = 0; $i < $roundTrips; $i++) {
                $ping->send($i);
                $pong->receive();
            }
            return (\hrtime(true) - $start) / 1e9;
        });
        $messages = $roundTrips * 2;
        return ['messages' => $messages, 'seconds' => $elapsed, 'messages_per_second' => $messages / $elapsed];
    }

    public static function peakRss(): ?int
    {
        $status = (string) @\file_get_contents('/proc/self/status');
        return \preg_match('/^VmHWM:\s+(\d+) kB/m', $status, $m) ? (int) $m[1] * 1024 : null;
    }
}
