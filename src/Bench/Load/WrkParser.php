<?php

declare(strict_types=1);

namespace Weft\Bench\Load;

/**
 * Reads the text `wrk --latency` prints. Pure: text in, LoadResult out, UnexpectedOutput when the text
 * is not a finished wrk run (e.g. "unable to connect to ...").
 */
final class WrkParser
{
    public static function parse(string $output): LoadResult
    {
        if (!\preg_match('/^\s*(\d+) requests in ([\d.]+)(us|ms|s|m|h),/m', $output, $total)) {
            throw UnexpectedOutput::from('wrk', $output);
        }
        if (!\preg_match('/^Requests\/sec:\s+([\d.]+)/m', $output, $rate)) {
            throw UnexpectedOutput::from('wrk', $output);
        }
        $percentiles = [];
        $distribution = \strpos($output, 'Latency Distribution');
        if ($distribution !== false) {
            \preg_match_all('/^\s+(\d+(?:\.\d+)?)%\s+([\d.]+)(us|ms|s|m|h)\s*$/m', \substr($output, $distribution), $lines, \PREG_SET_ORDER);
            foreach ($lines as [, $percent, $value, $unit]) {
                $percentiles[(string) (float) $percent] = self::seconds((float) $value, $unit);
            }
        }
        $max = null;
        if (\preg_match('/^\s*Latency\s+([\d.]+)(us|ms|s|m|h)\s+([\d.]+)(us|ms|s|m|h)\s+([\d.]+)(us|ms|s|m|h)/m', $output, $latency)) {
            $max = self::seconds((float) $latency[5], $latency[6]);
        }
        $errors = ['connect' => 0, 'read' => 0, 'write' => 0, 'timeout' => 0, 'non2xx' => 0];
        if (\preg_match('/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/', $output, $socket)) {
            $errors['connect'] = (int) $socket[1];
            $errors['read'] = (int) $socket[2];
            $errors['write'] = (int) $socket[3];
            $errors['timeout'] = (int) $socket[4];
        }
        if (\preg_match('/Non-2xx or 3xx responses: (\d+)/', $output, $non2xx)) {
            $errors['non2xx'] = (int) $non2xx[1];
        }
        $connections = \preg_match('/^\s*\d+ threads? and (\d+) connections?/m', $output, $open) ? (int) $open[1] : null;
        $errors['no_answer'] = self::noAnswer($connections, (int) $total[1], $errors);
        return new LoadResult(
            tool: 'wrk',
            requests: (int) $total[1],
            seconds: self::seconds((float) $total[2], $total[3]),
            perSecond: (float) $rate[1],
            p50: $percentiles['50'] ?? null,
            p90: $percentiles['90'] ?? null,
            p99: $percentiles['99'] ?? null,
            max: $max,
            errors: $errors,
            connections: $connections,
        );
    }

    /**
     * Connections that never got an answer, at least: wrk keeps every connection open for the whole run
     * and sends one request at a time on each, so a connection that was answered accounts for one
     * completed request or more. With fewer completed requests than open connections, the others waited
     * the whole run for nothing; wrk counts none of them as an error (its cut-off at the end is silent),
     * which made a 2 s run at 1,000 connections with 352 answers read "errors 0". Connections that
     * failed to connect or timed out are already counted under their own kind and are not counted again.
     * It is a lower bound: wrk's text does not say how the answers were spread over the connections.
     *
     * @param array<string, int> $errors
     */
    public static function noAnswer(?int $connections, int $requests, array $errors): int
    {
        if ($connections === null) {
            return 0;
        }
        return \max(0, $connections - $requests - ($errors['connect'] ?? 0) - ($errors['timeout'] ?? 0));
    }

    /** wrk prints durations with the unit that suits them: 261.00us, 1.18ms, 1.10s, 2.00m, 1.00h. */
    public static function seconds(float $value, string $unit): float
    {
        return $value * match ($unit) {
            'us' => 1e-6,
            'ms' => 1e-3,
            's' => 1.0,
            'm' => 60.0,
            'h' => 3600.0,
            default => throw new \InvalidArgumentException("Unknown wrk time unit '$unit'"),
        };
    }
}
