<?php

declare(strict_types=1);

namespace Weft\Bench\Load;

use Weft\Socket\ConnectOptions;
use Weft\Socket\LineSplitter;
use Weft\Socket\Socket;

/**
 * Checks a server answers correctly before it is loaded: one plain blocking HTTP GET, or one line
 * echoed (waiting from {main}: the loop runs until the answer comes). A benchmark of a server that answers wrongly would measure the wrong thing fast.
 */
final class Probe
{
    /**
     * @param array<string, string> $headers
     * @return array{status: int, headers: array<string, string>, body: string}
     * @throws \RuntimeException when there is no complete HTTP answer within $timeout seconds
     */
    public static function get(string $host, int $port, string $target = '/', float $timeout = 10.0, array $headers = []): array
    {
        return self::request($host, $port, 'GET', $target, $headers, null, $timeout);
    }

    /**
     * One request with any method, headers and body (Content-Length set from the body).
     *
     * @param array<string, string> $headers
     * @param null|\Closure(): bool $abandon asked while waiting: true gives up at once (Ctrl-C must not
     *        wait out a slow app's answer)
     * @return array{status: int, headers: array<string, string>, body: string}
     * @throws \RuntimeException when there is no complete HTTP answer within $timeout seconds
     */
    public static function request(string $host, int $port, string $method, string $target, array $headers = [], ?string $body = null, float $timeout = 10.0, ?\Closure $abandon = null): array
    {
        $socket = @\stream_socket_client("tcp://$host:$port", $errno, $error, $timeout);
        if ($socket === false) {
            throw new \RuntimeException("cannot connect to $host:$port: $error");
        }
        \stream_set_timeout($socket, (int) \ceil($timeout));
        $request = "$method $target HTTP/1.1\r\nHost: $host:$port\r\nConnection: close\r\n";
        foreach ($headers as $name => $value) {
            $request .= "$name: $value\r\n";
        }
        if ($body !== null) {
            $request .= 'Content-Length: ' . \strlen($body) . "\r\n";
        }
        \fwrite($socket, $request . "\r\n" . ($body ?? ''));
        $response = '';
        $deadline = \microtime(true) + $timeout;
        while (!\feof($socket) && \microtime(true) < $deadline) {
            // Wait in short slices, so $abandon is asked while a slow answer is awaited.
            $read = [$socket];
            $write = $except = null;
            $ready = @\stream_select($read, $write, $except, 0, 200_000);
            if ($ready === 0 || $ready === false) {
                if ($abandon !== null && $abandon()) {
                    \fclose($socket);
                    throw new \RuntimeException('abandoned while waiting for the answer');
                }
                continue;
            }
            $chunk = \fread($socket, 65536);
            if ($chunk === false || ($chunk === '' && \stream_get_meta_data($socket)['timed_out'])) {
                break;
            }
            $response .= $chunk;
        }
        \fclose($socket);
        return self::parseResponse($response);
    }

    /** @return array{status: int, headers: array<string, string>, body: string} */
    public static function parseResponse(string $response): array
    {
        $split = \strpos($response, "\r\n\r\n");
        if ($split === false || !\preg_match('#^HTTP/1\.[01] (\d{3})#', $response, $m)) {
            throw new \RuntimeException($response === '' ? 'no HTTP response' : 'not an HTTP response: ' . \substr($response, 0, 80));
        }
        $headers = [];
        foreach (\array_slice(\explode("\r\n", \substr($response, 0, $split)), 1) as $line) {
            [$name, $value] = \array_pad(\explode(':', $line, 2), 2, '');
            $headers[\strtolower(\trim($name))] = \trim($value);
        }
        $body = \substr($response, $split + 4);
        if (\strtolower($headers['transfer-encoding'] ?? '') === 'chunked') {
            $body = self::dechunk($body);
        } elseif (isset($headers['content-length'])) {
            $body = \substr($body, 0, (int) $headers['content-length']);
        }
        return ['status' => (int) $m[1], 'headers' => $headers, 'body' => $body];
    }

    private static function dechunk(string $body): string
    {
        $out = '';
        while (($eol = \strpos($body, "\r\n")) !== false) {
            $size = \hexdec(\trim(\explode(';', \substr($body, 0, $eol))[0]));
            if ($size === 0) {
                break;
            }
            $out .= \substr($body, $eol + 2, (int) $size);
            $body = \substr($body, $eol + 2 + (int) $size + 2);
        }
        return $out;
    }

    /**
     * Sends one line and returns the reply line (without its ending), read as the line protocol and
     * the load client read it (Socket::readLine(): the one line splitter).
     *
     * @throws \RuntimeException when it cannot connect, times out or gets no reply line
     */
    public static function line(string $host, int $port, string $line, float $timeout = 5.0): string
    {
        $socket = Socket::connect("$host:$port", ConnectOptions::defaults()->withConnectTimeout($timeout));
        try {
            $socket->write($line . "\n", $timeout);
            $reply = $socket->readLine(LineSplitter::DEFAULT_MAX_LENGTH, $timeout);
        } finally {
            $socket->close();
        }
        return $reply ?? throw new \RuntimeException('no reply line');
    }
}
