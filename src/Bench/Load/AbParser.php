<?php

declare(strict_types=1);

namespace Weft\Bench\Load;

/** Reads the text ApacheBench (`ab -k`) prints. Its latencies are whole milliseconds. */
final class AbParser
{
    public static function parse(string $output): LoadResult
    {
        if (!\preg_match('/^Complete requests:\s+(\d+)/m', $output, $complete)
            || !\preg_match('/^Requests per second:\s+([\d.]+)/m', $output, $rate)
            || !\preg_match('/^Time taken for tests:\s+([\d.]+) seconds/m', $output, $taken)) {
            throw UnexpectedOutput::from('ab', $output);
        }
        $percentiles = [];
        \preg_match_all('/^\s+(\d+)%\s+(\d+)/m', $output, $lines, \PREG_SET_ORDER);
        foreach ($lines as [, $percent, $ms]) {
            $percentiles[(int) $percent] = (int) $ms / 1000;
        }
        $errors = ['connect' => 0, 'read' => 0, 'write' => 0, 'timeout' => 0, 'non2xx' => 0, 'length' => 0, 'exceptions' => 0];
        if (\preg_match('/\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)/', $output, $failed)) {
            $errors['connect'] = (int) $failed[1];
            $errors['read'] = (int) $failed[2];
            $errors['length'] = (int) $failed[3];
            $errors['exceptions'] = (int) $failed[4];
        }
        if (\preg_match('/^Write errors:\s+(\d+)/m', $output, $write)) {
            $errors['write'] = (int) $write[1];
        }
        if (\preg_match('/^Non-2xx responses:\s+(\d+)/m', $output, $non2xx)) {
            $errors['non2xx'] = (int) $non2xx[1];
        }
        return new LoadResult(
            tool: 'ab',
            requests: (int) $complete[1],
            seconds: (float) $taken[1],
            perSecond: (float) $rate[1],
            p50: $percentiles[50] ?? null,
            p90: $percentiles[90] ?? null,
            p99: $percentiles[99] ?? null,
            max: $percentiles[100] ?? null,
            errors: $errors,
        );
    }
}
