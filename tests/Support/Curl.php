<?php

declare(strict_types=1);

namespace Weft\Tests\Support;

/** Requests through libcurl, a real client: status, headers (every value kept) and body. */
final class Curl
{
    /**
     * @param array<string, string> $headers
     * @return array{status: int, headers: array<string, list<string>>, body: string}
     */
    public static function request(string $method, string $url, array $headers = [], ?string $body = null, float $timeout = 15.0): array
    {
        $handle = \curl_init($url);
        $received = [];
        $lines = [];
        foreach ($headers as $name => $value) {
            $lines[] = "$name: $value";
        }
        \curl_setopt_array($handle, [
            \CURLOPT_CUSTOMREQUEST => $method,
            \CURLOPT_RETURNTRANSFER => true,
            \CURLOPT_HTTPHEADER => $lines,
            \CURLOPT_TIMEOUT_MS => (int) ($timeout * 1000),
            \CURLOPT_NOBODY => $method === 'HEAD',
            \CURLOPT_HEADERFUNCTION => static function ($handle, string $line) use (&$received): int {
                $colon = \strpos($line, ':');
                if ($colon !== false) {
                    $received[\strtolower(\trim(\substr($line, 0, $colon)))][] = \trim(\substr($line, $colon + 1));
                }
                return \strlen($line);
            },
        ]);
        if ($body !== null) {
            \curl_setopt($handle, \CURLOPT_POSTFIELDS, $body);
        }
        $content = \curl_exec($handle);
        if ($content === false) {
            throw new \RuntimeException("$method $url failed: " . \curl_error($handle));
        }
        $status = (int) \curl_getinfo($handle, \CURLINFO_RESPONSE_CODE);
        \curl_close($handle);
        return ['status' => $status, 'headers' => $received, 'body' => (string) $content];
    }

    /** @return array{status: int, headers: array<string, list<string>>, body: string} */
    public static function get(string $url, array $headers = []): array
    {
        return self::request('GET', $url, $headers);
    }

    /**
     * GETs every URL at once (one curl_multi, so they are in flight together) and waits for them all.
     *
     * @param array<int|string, string> $urls
     * @return array<int|string, array{status: int, body: string}> by the URLs' keys
     */
    public static function getAll(array $urls, int $timeout = 20): array
    {
        $multi = \curl_multi_init();
        $handles = [];
        foreach ($urls as $key => $url) {
            $handle = \curl_init($url);
            \curl_setopt_array($handle, [\CURLOPT_RETURNTRANSFER => true, \CURLOPT_TIMEOUT => $timeout]);
            \curl_multi_add_handle($multi, $handle);
            $handles[$key] = $handle;
        }
        do {
            $status = \curl_multi_exec($multi, $running);
            if ($running > 0) {
                \curl_multi_select($multi, 1.0);
            }
        } while ($running > 0 && $status === \CURLM_OK);
        $answers = [];
        foreach ($handles as $key => $handle) {
            $answers[$key] = ['status' => (int) \curl_getinfo($handle, \CURLINFO_RESPONSE_CODE), 'body' => (string) \curl_multi_getcontent($handle)];
            \curl_multi_remove_handle($multi, $handle);
        }
        \curl_multi_close($multi);
        return $answers;
    }
}
