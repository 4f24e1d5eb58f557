<?php

declare(strict_types=1);

namespace Weft\Tests\Support;

/** Raw bytes over a blocking TCP socket: tests see exactly what the server sends, nothing smoothed over. */
final class RawHttp
{
    /** @var resource */
    public $socket;

    public function __construct(string $address, float $timeout = 10.0)
    {
        $socket = @\stream_socket_client('tcp://' . $address, $errno, $error, $timeout);
        if ($socket === false) {
            throw new \RuntimeException("connect to $address failed: $error");
        }
        \stream_set_timeout($socket, (int) \ceil($timeout));
        $this->socket = $socket;
    }

    public function send(string $bytes): self
    {
        \fwrite($this->socket, $bytes);
        return $this;
    }

    /** Reads one response (head + Content-Length or chunked body). @return array{status: int, headers: array<string, string>, body: string, raw: string} */
    public function response(): array
    {
        $raw = '';
        while (!\str_contains($raw, "\r\n\r\n")) {
            $chunk = \fread($this->socket, 1);
            if ($chunk === '' || $chunk === false) {
                throw new \RuntimeException("connection ended inside a response head: " . \json_encode($raw));
            }
            $raw .= $chunk;
        }
        [$head] = \explode("\r\n\r\n", $raw, 2);
        $lines = \explode("\r\n", $head);
        $status = (int) \explode(' ', $lines[0])[1];
        $headers = [];
        foreach (\array_slice($lines, 1) as $line) {
            [$name, $value] = \explode(':', $line, 2);
            $headers[\strtolower($name)] = \trim($value);
        }
        $body = '';
        if (isset($headers['content-length'])) {
            $length = (int) $headers['content-length'];
            while (\strlen($body) < $length) {
                $chunk = \fread($this->socket, $length - \strlen($body));
                if ($chunk === '' || $chunk === false) {
                    break;
                }
                $body .= $chunk;
            }
        } elseif (($headers['transfer-encoding'] ?? '') === 'chunked') {
            while (true) {
                $size = \hexdec(\trim((string) \fgets($this->socket)));
                if ($size === 0) {
                    \fgets($this->socket);
                    break;
                }
                $body .= \fread($this->socket, (int) $size);
                \fgets($this->socket);
            }
        }
        return ['status' => $status, 'headers' => $headers, 'body' => $body, 'raw' => $raw . $body];
    }

    /** Everything until the server closes (or the timeout). */
    public function rest(): string
    {
        return (string) \stream_get_contents($this->socket);
    }

    public function isClosedByPeer(float $timeout = 5.0): bool
    {
        \stream_set_timeout($this->socket, (int) \ceil($timeout));
        $data = \fread($this->socket, 1);
        return $data === '' && \feof($this->socket);
    }

    public function close(): void
    {
        if (\is_resource($this->socket)) {
            \fclose($this->socket);
        }
    }

    public static function get(string $address, string $target = '/', array $headers = []): array
    {
        $client = new self($address);
        $lines = "GET $target HTTP/1.1\r\nHost: test\r\nConnection: close\r\n";
        foreach ($headers as $name => $value) {
            $lines .= "$name: $value\r\n";
        }
        $response = $client->send($lines . "\r\n")->response();
        $client->close();
        return $response;
    }
}
