<?php

declare(strict_types=1);

namespace Weft\Tests\Support;

use Weft\WebSocket\Frame;

/**
 * A deliberately simple, blocking WebSocket client over a plain socket, for protocol tests: it sends
 * exactly the bytes it is given (broken frames included) and reads frames back as they come.
 */
final class RawWebSocket
{
    /** @var resource */
    private $socket;
    private string $buffer = '';
    public string $responseHead = '';

    /**
     * @param array<string, string> $headers
     * @param string $pipelined bytes sent in the same write as the handshake (frames the server reads
     *     together with the request, before the application's handler has started)
     */
    public function __construct(string $address, string $path = '/', array $headers = [], ?int $receiveBuffer = null, string $pipelined = '')
    {
        if ($receiveBuffer !== null) {
            // A small kernel buffer, set before connecting: a client that reads nothing fills it quickly.
            [$host, $port] = \explode(':', $address);
            $raw = \socket_create(\AF_INET, \SOCK_STREAM, \SOL_TCP);
            \socket_set_option($raw, \SOL_SOCKET, \SO_RCVBUF, $receiveBuffer);
            if (!\socket_connect($raw, $host, (int) $port)) {
                throw new \RuntimeException("connect $address failed");
            }
            $socket = \socket_export_stream($raw);
        } else {
            $socket = @\stream_socket_client("tcp://$address", $errno, $error, 5.0);
            if ($socket === false) {
                throw new \RuntimeException("connect $address: $error");
            }
        }
        \stream_set_chunk_size($socket, 1 << 20);
        $this->socket = $socket;
        $request = "GET $path HTTP/1.1\r\nHost: $address\r\n";
        $headers += [
            'Upgrade' => 'websocket',
            'Connection' => 'Upgrade',
            'Sec-WebSocket-Key' => \base64_encode(\random_bytes(16)),
            'Sec-WebSocket-Version' => '13',
        ];
        foreach ($headers as $name => $value) {
            $request .= "$name: $value\r\n";
        }
        \fwrite($socket, $request . "\r\n" . $pipelined);
        $deadline = \microtime(true) + 5.0;
        while (!\str_contains($this->buffer, "\r\n\r\n")) {
            $chunk = $this->readSome($deadline);
            if ($chunk === null) {
                break;
            }
        }
        [$this->responseHead, $this->buffer] = \explode("\r\n\r\n", $this->buffer, 2) + [1 => ''];
    }

    public function status(): int
    {
        return (int) \substr($this->responseHead, 9, 3);
    }

    /** Sends raw bytes (frames built with Frame::encodeMasked() or by hand). */
    public function send(string $bytes): void
    {
        @\fwrite($this->socket, $bytes); // the server may have failed the connection already
    }

    public function sendText(string $text): void
    {
        $this->send(Frame::encodeMasked(Frame::TEXT, $text));
    }

    /**
     * The next frame from the server: [opcode, payload, fin], or null at EOF or when nothing came in time.
     *
     * @return array{int, string, bool}|null
     */
    public function read(float $timeout = 5.0): ?array
    {
        $deadline = \microtime(true) + $timeout;
        while (true) {
            $frame = $this->parse();
            if ($frame !== null) {
                return $frame;
            }
            if ($this->readSome($deadline) === null) {
                return null;
            }
        }
    }

    /**
     * Every frame until the server ends the connection: [frames, whether TCP ended within the time].
     *
     * @return array{list<array{int, string, bool}>, bool}
     */
    public function readToEnd(float $timeout = 5.0, bool $answerClose = true): array
    {
        $deadline = \microtime(true) + $timeout;
        $frames = [];
        while (\microtime(true) < $deadline) {
            $frame = $this->read(\max(0.01, $deadline - \microtime(true)));
            if ($frame === null) {
                return [$frames, \feof($this->socket)];
            }
            $frames[] = $frame;
            if ($frame[0] === Frame::CLOSE && $answerClose) {
                // As a real client does: the server may then end TCP at once instead of after its close timeout.
                @\fwrite($this->socket, Frame::encodeMasked(Frame::CLOSE, \substr($frame[1], 0, 2)));
            }
        }
        return [$frames, false];
    }

    /** The close code in a close frame's payload (1005 when it has none). */
    public static function code(string $payload): int
    {
        return \strlen($payload) >= 2 ? \unpack('n', $payload)[1] : 1005;
    }

    public function close(): void
    {
        if (\is_resource($this->socket)) {
            \fclose($this->socket);
        }
    }

    /** @return array{int, string, bool}|null */
    private function parse(): ?array
    {
        $b = $this->buffer;
        if (\strlen($b) < 2) {
            return null;
        }
        $length = \ord($b[1]) & 0x7F;
        $head = 2;
        if ($length === 126) {
            if (\strlen($b) < 4) {
                return null;
            }
            $length = \unpack('n', $b, 2)[1];
            $head = 4;
        } elseif ($length === 127) {
            if (\strlen($b) < 10) {
                return null;
            }
            $length = \unpack('J', $b, 2)[1];
            $head = 10;
        }
        if (\ord($b[1]) & 0x80) {
            throw new \RuntimeException('the server sent a masked frame');
        }
        if (\strlen($b) < $head + $length) {
            return null;
        }
        $this->buffer = (string) \substr($b, $head + $length);
        return [\ord($b[0]) & 0x0F, (string) \substr($b, $head, $length), (\ord($b[0]) & 0x80) !== 0];
    }

    private function readSome(float $deadline): ?string
    {
        while (true) {
            $left = $deadline - \microtime(true);
            if ($left <= 0) {
                return null;
            }
            $read = [$this->socket];
            $w = $e = null;
            if (@\stream_select($read, $w, $e, (int) $left, (int) (($left - (int) $left) * 1e6)) > 0) {
                $chunk = @\fread($this->socket, 1 << 20);
                if ($chunk === '' || $chunk === false) {
                    return null;
                }
                $this->buffer .= $chunk;
                return $chunk;
            }
        }
    }
}
