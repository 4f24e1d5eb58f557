<?php

declare(strict_types=1);

namespace Weft\Bench\Load;

use Weft\Bench\Environment;
use Weft\Bench\Process\Process;
use Weft\Bench\Process\ResourceSampler;

/**
 * Runs one load process against a server while sampling the server's whole process tree every half
 * second; the sampling window is exactly the load's lifetime.
 */
final class Measurement
{
    public const SAMPLE_EVERY = 0.5;

    /**
     * @param list<string> $command the load generator (pinned to the load CPU by the environment)
     * @param array<string, string> $loadEnv
     * @return array{output: string, usage: array<string, mixed>}
     * @throws \RuntimeException when the load does not finish in time or is interrupted
     */
    public static function run(Environment $env, int $serverPid, array $command, string $name, float $limit, array $loadEnv = []): array
    {
        $run = self::runAll($env, $serverPid, [$command], $name, $limit, $loadEnv);
        return ['output' => $run['outputs'][0], 'usage' => $run['usage']];
    }

    /**
     * Several load processes at once (e.g. one line client split over four processes).
     *
     * @param list<list<string>> $commands
     * @param array<string, string> $loadEnv
     * @return array{outputs: list<string>, usage: array<string, mixed>}
     */
    public static function runAll(Environment $env, int $serverPid, array $commands, string $name, float $limit, array $loadEnv = []): array
    {
        $sampler = new ResourceSampler($serverPid, $env->machine->clockTicks, $env->machine->pageSize);
        $sampler->sample();
        $loads = [];
        try {
            foreach ($commands as $command) {
                $loads[] = $env->startLoad($command, $name, $loadEnv);
            }
            $deadline = \microtime(true) + $limit;
            foreach ($loads as $load) {
                $finished = $load->wait(\max(0.0, $deadline - \microtime(true)), static function () use ($sampler, $env, $loads): void {
                    $sampler->sample();
                    if ($env->interrupted) {
                        foreach ($loads as $each) {
                            $each->signalGroup(\SIGTERM);
                        }
                    }
                }, self::SAMPLE_EVERY);
                if ($env->interrupted) {
                    throw new \RuntimeException('interrupted');
                }
                if (!$finished) {
                    throw new \RuntimeException(\basename($commands[0][0]) . " did not finish within {$limit} s");
                }
            }
            $sampler->sample();
            $outputs = [];
            foreach ($loads as $load) {
                $output = $load->stdout();
                if (\trim($output) === '') {
                    if ($load->exitCode() !== 0) {
                        throw new \RuntimeException('load generator failed (exit ' . $load->exitCode() . '): ' . $load->stderrTail(3));
                    }
                    $output = (string) @\file_get_contents($load->stderrFile);
                }
                $outputs[] = $output;
            }
            return ['outputs' => $outputs, 'usage' => $sampler->summary()];
        } finally {
            foreach ($loads as $load) {
                $load->terminate(1.0);
                $env->processes->forget($load);
            }
        }
    }

    /**
     * The server-side figures of a row: CPU % of one core, CPU time per request in microseconds, peak
     * total RSS and PSS of all server processes.
     *
     * @param array<string, mixed> $usage from ResourceSampler::summary()
     * @return array<string, mixed>
     */
    public static function serverMetrics(array $usage, int $requests): array
    {
        return [
            'cpu_pct' => $usage['cpu_pct'],
            'cpu_s' => $usage['cpu_s'],
            'cpu_us_per_req' => $requests > 0 ? \round($usage['cpu_s'] / $requests * 1e6, 1) : null,
            'rss_bytes' => $usage['rss_bytes'],
            'pss_bytes' => $usage['pss_bytes'],
            'processes' => $usage['processes'],
            'samples' => $usage['samples'],
        ];
    }
}
