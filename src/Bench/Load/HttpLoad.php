<?php

declare(strict_types=1);

namespace Weft\Bench\Load;

use Weft\Coroutine\Timeout;
use Weft\Coroutine\WaitGroup;
use Weft\Socket\ConnectOptions;
use Weft\Socket\Socket;
use Weft\Socket\SocketException;

use function Weft\go;
use function Weft\run;

/**
 * A closed-loop HTTP/1.1 keep-alive load client on Weft's coroutines: each connection sends exactly
 * $requests GETs one after the other. The rate is the requests over the time until the last answer,
 * so a slow endpoint (1 s per request) is measured in whole cycles, without wrk's cut-off at the end
 * of a fixed duration, which loses the cycle in flight on every connection.
 */
final class HttpLoad
{
    /** @return array<string, mixed> */
    public static function run(string $host, int $port, string $path, int $connections, int $requests, float $timeout): array
    {
        return run(static function () use ($host, $port, $path, $connections, $requests, $timeout): array {
            $done = 0;
            $errors = ['connect' => 0, 'read' => 0, 'timeout' => 0, 'non2xx' => 0];
            $latencies = [];
            $wg = new WaitGroup();
            $start = \hrtime(true);
            for ($c = 0; $c < $connections; $c++) {
                $wg->add();
                go(static function () use ($host, $port, $path, $requests, $timeout, $wg, &$done, &$errors, &$latencies): void {
                    try {
                        $socket = Socket::connect("$host:$port", ConnectOptions::defaults()->withConnectTimeout($timeout));
                    } catch (\Throwable) {
                        $errors['connect']++;
                        $wg->done();
                        return;
                    }
                    try {
                        for ($i = 0; $i < $requests; $i++) {
                            $sent = \hrtime(true);
                            $socket->write("GET $path HTTP/1.1\r\nHost: $host:$port\r\n\r\n", $timeout);
                            $status = self::readResponse($socket, $timeout);
                            $latencies[] = (\hrtime(true) - $sent) / 1e6;
                            if ($status < 200 || $status > 299) {
                                $errors['non2xx']++;
                            } else {
                                $done++;
                            }
                        }
                    } catch (Timeout) {
                        $errors['timeout']++;
                    } catch (SocketException|\UnexpectedValueException) {
                        $errors['read']++;
                    } finally {
                        $socket->close();
                        $wg->done();
                    }
                });
            }
            $wg->wait();
            $elapsed = (\hrtime(true) - $start) / 1e9;
            \sort($latencies);
            $n = \count($latencies);
            $p = static fn (float $q): ?float => $n === 0 ? null : $latencies[\min($n - 1, (int) \floor($q * $n))];
            return [
                'connections' => $connections,
                'requests_per_connection' => $requests,
                'requests' => $done,
                'seconds' => $elapsed,
                'requests_per_second' => $elapsed > 0 ? $done / $elapsed : 0.0,
                'p50_ms' => $p(0.5),
                'p99_ms' => $p(0.99),
                'max_ms' => $n === 0 ? null : $latencies[$n - 1],
                'errors' => $errors,
            ];
        });
    }

    /** Reads one response (Content-Length or chunked body) and returns its status. */
    private static function readResponse(Socket $socket, float $timeout): int
    {
        $statusLine = $socket->readLine(8192, $timeout) ?? throw new \UnexpectedValueException('connection closed');
        if (!\preg_match('#^HTTP/1\.[01] (\d{3})#', $statusLine, $m)) {
            throw new \UnexpectedValueException('not an HTTP response');
        }
        $length = 0;
        $chunked = false;
        while (($line = $socket->readLine(8192, $timeout)) !== null && $line !== '') {
            [$name, $value] = \array_pad(\explode(':', $line, 2), 2, '');
            $name = \strtolower(\trim($name));
            if ($name === 'content-length') {
                $length = (int) \trim($value);
            } elseif ($name === 'transfer-encoding' && \stripos($value, 'chunked') !== false) {
                $chunked = true;
            }
        }
        if ($chunked) {
            while (($size = \hexdec(\trim((string) $socket->readLine(8192, $timeout)))) > 0) {
                $socket->readExactly((int) $size + 2, $timeout);
            }
            $socket->readLine(8192, $timeout);
        } elseif ($length > 0) {
            $socket->readExactly($length, $timeout);
        }
        return (int) $m[1];
    }
}
