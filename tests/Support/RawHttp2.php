<?php

declare(strict_types=1);

namespace Weft\Tests\Support;

use Weft\Http2\Frame;
use Weft\Http2\Hpack\Decoder;
use Weft\Http2\Hpack\Encoder;

/**
 * Raw HTTP/2 frames over a blocking TCP socket (h2c with prior knowledge): tests write exactly the
 * frames a hostile client would and read exactly what the server answers. Header blocks go through the
 * real HPACK encoder and decoder.
 */
final class RawHttp2
{
    /** @var resource */
    public $socket;
    public readonly Encoder $encoder;
    public readonly Decoder $decoder;
    /** Acknowledge the server's SETTINGS as they are read, as every real client does (§6.5.3). */
    public bool $ackSettings = true;
    private string $buffer = '';

    public function __construct(string $address, float $timeout = 10.0, bool $preface = true, array $settings = [])
    {
        $socket = @\stream_socket_client('tcp://' . $address, $errno, $error, $timeout);
        if ($socket === false) {
            throw new \RuntimeException("connect to $address failed: $error");
        }
        \stream_set_timeout($socket, (int) \ceil($timeout));
        $this->socket = $socket;
        $this->encoder = new Encoder();
        $this->decoder = new Decoder(4096, 1 << 20);
        if ($preface) {
            $this->send(Frame::PREFACE . Frame::settings($settings));
        }
    }

    public function send(string $bytes): self
    {
        for ($at = 0; $at < \strlen($bytes);) {
            $written = @\fwrite($this->socket, \substr($bytes, $at));
            if ($written === false || $written === 0) {
                break; // the server closed on us: what it said is still to be read
            }
            $at += $written;
        }
        return $this;
    }

    public static function frame(int $type, int $flags, int $stream, string $payload = ''): string
    {
        return Frame::frame($type, $flags, $stream, $payload);
    }

    /** A request's HEADERS frame. @param array<string, string> $extra */
    public function headers(int $stream, string $path = '/', string $method = 'GET', array $extra = [], bool $end = true): string
    {
        $fields = [[':method', $method], [':scheme', 'http'], [':path', $path], [':authority', 'localhost']];
        foreach ($extra as $name => $value) {
            $fields[] = [$name, $value];
        }
        return Frame::frame(Frame::HEADERS, Frame::END_HEADERS | ($end ? Frame::END_STREAM : 0), $stream, $this->encoder->encode($fields));
    }

    /**
     * The next frame, or null when the connection ended.
     *
     * @return array{type: int, flags: int, stream: int, payload: string}|null
     */
    public function read(): ?array
    {
        while (\strlen($this->buffer) < 9 || \strlen($this->buffer) < 9 + (\unpack('N', "\0" . \substr($this->buffer, 0, 3))[1])) {
            $chunk = @\fread($this->socket, 65536);
            if ($chunk === '' || $chunk === false) {
                if (\feof($this->socket) || $chunk === false || \stream_get_meta_data($this->socket)['timed_out']) {
                    return null;
                }
                continue;
            }
            $this->buffer .= $chunk;
        }
        $length = \unpack('N', "\0" . \substr($this->buffer, 0, 3))[1];
        $frame = [
            'type' => \ord($this->buffer[3]),
            'flags' => \ord($this->buffer[4]),
            'stream' => \unpack('N', \substr($this->buffer, 5, 4))[1] & 0x7fffffff,
            'payload' => \substr($this->buffer, 9, $length),
        ];
        $this->buffer = (string) \substr($this->buffer, 9 + $length);
        if ($frame['type'] === Frame::SETTINGS && ($frame['flags'] & Frame::ACK) === 0 && $this->ackSettings) {
            $this->send(Frame::frame(Frame::SETTINGS, Frame::ACK, 0));
        }
        return $frame;
    }

    /**
     * Reads until a frame of $type (on $stream, when given) arrives; null when the connection ends first.
     *
     * @return array{type: int, flags: int, stream: int, payload: string}|null
     */
    public function readUntil(int $type, ?int $stream = null): ?array
    {
        while (($frame = $this->read()) !== null) {
            if ($frame['type'] === $type && ($stream === null || $frame['stream'] === $stream)) {
                return $frame;
            }
            if ($frame['type'] === Frame::HEADERS) {
                $this->decoder->decode($frame['payload']); // keep HPACK in step
            }
        }
        return null;
    }

    /** The GOAWAY the server sends, as [error code, last stream]; null when it closes without one. @return array{int, int}|null */
    public function goaway(): ?array
    {
        $frame = $this->readUntil(Frame::GOAWAY);
        if ($frame === null) {
            return null;
        }
        ['l' => $last, 'e' => $error] = \unpack('Nl/Ne', $frame['payload']);
        return [$error, $last & 0x7fffffff];
    }

    /**
     * Reads one stream's whole answer: its status, header fields and body, or the RST_STREAM code that
     * ended it. Other streams' frames are kept in $others.
     *
     * @return array{status: ?int, headers: array<string, string>, body: string, reset: ?int}
     */
    public function response(int $stream, ?array &$others = null): array
    {
        $result = ['status' => null, 'headers' => [], 'body' => '', 'reset' => null];
        while (($frame = $this->read()) !== null) {
            if ($frame['type'] === Frame::HEADERS) {
                $fields = $this->decoder->decode($frame['payload']);
                if ($frame['stream'] !== $stream) {
                    $others[] = $frame + ['fields' => $fields];
                    continue;
                }
                foreach ($fields as [$name, $value]) {
                    if ($name === ':status') {
                        $result['status'] = (int) $value;
                    } else {
                        $result['headers'][$name] = $value;
                    }
                }
            } elseif ($frame['stream'] !== $stream) {
                $others[] = $frame;
                continue;
            } elseif ($frame['type'] === Frame::DATA) {
                $result['body'] .= $frame['payload'];
                if ($frame['payload'] !== '') {
                    // Keep the windows open, as a real client does.
                    $this->send(Frame::windowUpdate(0, \strlen($frame['payload'])) . Frame::windowUpdate($stream, \strlen($frame['payload'])));
                }
            } elseif ($frame['type'] === Frame::RST_STREAM) {
                $result['reset'] = \unpack('N', $frame['payload'])[1];
                return $result;
            }
            if (($frame['flags'] & Frame::END_STREAM) !== 0 && $frame['type'] !== Frame::RST_STREAM) {
                return $result;
            }
        }
        throw new \RuntimeException("the connection ended before stream $stream was answered");
    }

    /** Whether the server has closed the connection (reads until EOF, bounded by the socket timeout). */
    public function closed(): bool
    {
        while (($frame = $this->read()) !== null) {
        }
        return \feof($this->socket);
    }

    public function close(): void
    {
        \fclose($this->socket);
    }
}
