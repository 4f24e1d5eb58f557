<?php

declare(strict_types=1);

namespace Weft\Http\Fuzz;

/**
 * Reads HTTP/1.1 responses off raw bytes, strictly: anything that is not a well-formed response (status
 * line, field lines, framing by Content-Length or chunked) is reported as malformed. For the request
 * vectors and the fuzzer run against a live server.
 */
final class Wire
{
    /**
     * Sends $raw on a fresh connection, half-closes it, and reads every response until the server closes.
     *
     * @param list<string> $methods the request methods in order (a HEAD answer has no body)
     * @return array{responses: list<array{status: int, headers: array<string, list<string>>, body: string}>, malformed: ?string, closed: bool}
     */
    public static function exchange(string $address, string $raw, array $methods = [], float $timeout = 10.0): array
    {
        $socket = @\stream_socket_client('tcp://' . $address, $errno, $error, $timeout);
        if ($socket === false) {
            throw new \RuntimeException("connect to $address failed: $error");
        }
        \stream_set_timeout($socket, (int) \ceil($timeout));
        for ($sent = 0; $sent < \strlen($raw);) {
            $n = @\fwrite($socket, \substr($raw, $sent));
            if ($n === false || $n === 0) {
                break; // the server closed on an error before reading it all
            }
            $sent += $n;
        }
        @\stream_socket_shutdown($socket, \STREAM_SHUT_WR);
        $data = '';
        $closed = false;
        while (true) {
            $chunk = @\fread($socket, 65536);
            if ($chunk === '' || $chunk === false) {
                $closed = \feof($socket);
                break;
            }
            $data .= $chunk;
        }
        \fclose($socket);
        [$responses, $malformed] = self::parse($data, $methods);
        return ['responses' => $responses, 'malformed' => $malformed, 'closed' => $closed];
    }

    /**
     * @param list<string> $methods
     * @return array{0: list<array{status: int, headers: array<string, list<string>>, body: string}>, 1: ?string}
     */
    public static function parse(string $data, array $methods = []): array
    {
        $responses = [];
        $final = 0;
        while ($data !== '') {
            $end = \strpos($data, "\r\n\r\n");
            if ($end === false) {
                return [$responses, 'incomplete head: ' . \json_encode(\substr($data, 0, 200))];
            }
            $lines = \explode("\r\n", \substr($data, 0, $end));
            $data = \substr($data, $end + 4);
            if (\preg_match('~\AHTTP/1\.[01] ([1-5][0-9][0-9]) [\x20-\x7e]*\z~', \array_shift($lines), $m) !== 1) {
                return [$responses, 'bad status line'];
            }
            $status = (int) $m[1];
            $headers = [];
            foreach ($lines as $line) {
                if (\preg_match('/\A([!#$%&\'*+\-.^_`|~0-9A-Za-z]+):[ \t]*([^\x00-\x08\x0a-\x1f\x7f]*?)[ \t]*\z/', $line, $f) !== 1) {
                    return [$responses, 'bad field line: ' . \json_encode($line)];
                }
                $headers[\strtolower($f[1])][] = $f[2];
            }
            if ($status < 200) {
                continue; // interim (100 Continue)
            }
            $method = $methods[$final++] ?? 'GET';
            $body = '';
            if ($method === 'HEAD' || $status === 204 || $status === 304) {
                // no body
            } elseif (isset($headers['transfer-encoding'])) {
                if ($headers['transfer-encoding'] !== ['chunked'] || isset($headers['content-length'])) {
                    return [$responses, 'bad framing fields'];
                }
                while (true) {
                    if (\preg_match('/\A([0-9a-f]+)\r\n/i', $data, $c) !== 1) {
                        return [$responses, 'bad chunk'];
                    }
                    $size = \hexdec($c[1]);
                    if (\strlen($data) < \strlen($c[0]) + $size + 2 || \substr($data, \strlen($c[0]) + (int) $size, 2) !== "\r\n") {
                        return [$responses, 'truncated chunk'];
                    }
                    $body .= \substr($data, \strlen($c[0]), (int) $size);
                    $data = \substr($data, \strlen($c[0]) + (int) $size + 2);
                    if ($size === 0) {
                        break;
                    }
                }
            } elseif (isset($headers['content-length'])) {
                if (\count($headers['content-length']) !== 1 || !\ctype_digit($headers['content-length'][0])) {
                    return [$responses, 'bad Content-Length'];
                }
                $length = (int) $headers['content-length'][0];
                if (\strlen($data) < $length) {
                    return [$responses, 'truncated body'];
                }
                $body = \substr($data, 0, $length);
                $data = \substr($data, $length);
            } else {
                $body = $data; // close-delimited
                $data = '';
            }
            $responses[] = ['status' => $status, 'headers' => $headers, 'body' => $body];
        }
        return [$responses, null];
    }
}
