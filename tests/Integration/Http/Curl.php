<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Http;

/** The curl binary, run to completion: a real client with its own HTTP implementation. */
final class Curl
{
    /**
     * @param list<string> $args
     * @return array{code: int, out: string, err: string}
     */
    public static function run(array $args, float $timeout = 60.0): array
    {
        $process = \proc_open(['curl', '--silent', '--show-error', '--max-time', (string) (int) $timeout, ...$args], [
            0 => ['file', '/dev/null', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w'],
        ], $pipes);
        if ($process === false) {
            throw new \RuntimeException('cannot run curl');
        }
        $out = (string) \stream_get_contents($pipes[1]);
        $err = (string) \stream_get_contents($pipes[2]);
        \fclose($pipes[1]);
        \fclose($pipes[2]);
        return ['code' => \proc_close($process), 'out' => $out, 'err' => $err];
    }

    /**
     * Status, headers (lower-case names) and body of one GET through curl.
     *
     * @param list<string> $args extra curl arguments
     * @return array{status: int, headers: array<string, string>, body: string}
     */
    public static function get(string $url, array $args = []): array
    {
        $headerFile = (string) \tempnam(\sys_get_temp_dir(), 'weft-curl-');
        try {
            $result = self::run([...$args, '--dump-header', $headerFile, $url]);
            if ($result['code'] !== 0) {
                throw new \RuntimeException("curl $url failed ({$result['code']}): {$result['err']}");
            }
            $head = (string) \file_get_contents($headerFile);
        } finally {
            @\unlink($headerFile);
        }
        $lines = \explode("\r\n", \trim($head));
        $headers = [];
        foreach (\array_slice($lines, 1) as $line) {
            [$name, $value] = \explode(':', $line, 2) + [1 => ''];
            $headers[\strtolower($name)] = \trim($value);
        }
        return ['status' => (int) \explode(' ', $lines[0])[1], 'headers' => $headers, 'body' => $result['out']];
    }
}
