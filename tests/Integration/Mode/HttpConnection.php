<?php

declare(strict_types=1);

namespace Weft\Tests\Integration\Mode;

/** A plain blocking HTTP/1.1 client connection, enough to see keep-alive and framing as sent. */
final class HttpConnection
{
    /** @var resource */
    private mixed $socket;
    private string $buffer = '';

    public function __construct(int $port, string $host = '127.0.0.1', float $timeout = 30.0)
    {
        $socket = @\stream_socket_client("tcp://$host:$port", $errno, $error, $timeout);
        if ($socket === false) {
            throw new \RuntimeException("connect to $host:$port: $error");
        }
        \stream_set_timeout($socket, (int) $timeout);
        $this->socket = $socket;
    }

    public static function get(int $port, string $target): Reply
    {
        $connection = new self($port);
        try {
            return $connection->request('GET', $target, ['Connection' => 'close']);
        } finally {
            $connection->close();
        }
    }

    /** @param array<string, string> $headers */
    public function request(string $method, string $target, array $headers = [], string $body = ''): Reply
    {
        $head = "$method $target HTTP/1.1\r\nHost: localhost\r\n";
        if ($body !== '' || \in_array($method, ['POST', 'PUT', 'PATCH'], true)) {
            $headers['Content-Length'] = (string) \strlen($body);
        }
        foreach ($headers as $name => $value) {
            $head .= "$name: $value\r\n";
        }
        \fwrite($this->socket, $head . "\r\n" . $body);
        return $this->read($method === 'HEAD');
    }

    public function isOpen(): bool
    {
        return \is_resource($this->socket) && !\feof($this->socket);
    }

    public function close(): void
    {
        if (\is_resource($this->socket)) {
            \fclose($this->socket);
        }
    }

    private function read(bool $isHead): Reply
    {
        while (($end = \strpos($this->buffer, "\r\n\r\n")) === false) {
            $this->fill();
        }
        $lines = \explode("\r\n", \substr($this->buffer, 0, $end));
        $this->buffer = \substr($this->buffer, $end + 4);
        if (\preg_match('#^HTTP/1\.[01] (\d{3}) ?(.*)$#', \array_shift($lines), $m) !== 1) {
            throw new \RuntimeException('not an HTTP response');
        }
        $headers = [];
        foreach ($lines as $line) {
            [$name, $value] = \explode(':', $line, 2);
            $headers[\strtolower($name)][] = \trim($value);
        }
        $status = (int) $m[1];
        $body = '';
        if ($isHead || $status === 204 || $status === 304) {
            // no body
        } elseif (isset($headers['content-length'])) {
            $length = (int) $headers['content-length'][0];
            while (\strlen($this->buffer) < $length) {
                $this->fill();
            }
            $body = \substr($this->buffer, 0, $length);
            $this->buffer = \substr($this->buffer, $length);
        } elseif (\strtolower($headers['transfer-encoding'][0] ?? '') === 'chunked') {
            while (true) {
                while (($eol = \strpos($this->buffer, "\r\n")) === false) {
                    $this->fill();
                }
                $size = \hexdec(\substr($this->buffer, 0, $eol));
                while (\strlen($this->buffer) < $eol + 2 + $size + 2) {
                    $this->fill();
                }
                $body .= \substr($this->buffer, $eol + 2, (int) $size);
                $this->buffer = \substr($this->buffer, $eol + 2 + (int) $size + 2);
                if ($size === 0) {
                    break;
                }
            }
        } else {
            while (!\feof($this->socket)) {
                $this->buffer .= (string) \fread($this->socket, 65536);
            }
            $body = $this->buffer;
            $this->buffer = '';
        }
        return new Reply($status, $m[2], $headers, $body);
    }

    private function fill(): void
    {
        $chunk = \fread($this->socket, 65536);
        if ($chunk === false || $chunk === '') {
            $meta = \stream_get_meta_data($this->socket);
            throw new \RuntimeException($meta['timed_out'] ? 'read timed out' : 'connection closed before the response ended');
        }
        $this->buffer .= $chunk;
    }
}
