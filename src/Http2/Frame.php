<?php

declare(strict_types=1);

namespace Weft\Http2;

/**
 * RFC 9113 §4 and §6: frame types, flags, settings, error codes, and the frames the server writes, each
 * built as one string (a frame is a 9-byte header and its payload; no object per frame).
 *
 * @internal
 */
final class Frame
{
    public const PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    public const HEADER_SIZE = 9;

    public const DATA = 0x0;
    public const HEADERS = 0x1;
    public const PRIORITY = 0x2;
    public const RST_STREAM = 0x3;
    public const SETTINGS = 0x4;
    public const PUSH_PROMISE = 0x5;
    public const PING = 0x6;
    public const GOAWAY = 0x7;
    public const WINDOW_UPDATE = 0x8;
    public const CONTINUATION = 0x9;

    public const END_STREAM = 0x1;
    public const ACK = 0x1;
    public const END_HEADERS = 0x4;
    public const PADDED = 0x8;
    public const PRIORITY_FLAG = 0x20;

    public const SETTINGS_HEADER_TABLE_SIZE = 0x1;
    public const SETTINGS_ENABLE_PUSH = 0x2;
    public const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
    public const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
    public const SETTINGS_MAX_FRAME_SIZE = 0x5;
    public const SETTINGS_MAX_HEADER_LIST_SIZE = 0x6;

    public const NO_ERROR = 0x0;
    public const PROTOCOL_ERROR = 0x1;
    public const INTERNAL_ERROR = 0x2;
    public const FLOW_CONTROL_ERROR = 0x3;
    public const SETTINGS_TIMEOUT = 0x4;
    public const STREAM_CLOSED = 0x5;
    public const FRAME_SIZE_ERROR = 0x6;
    public const REFUSED_STREAM = 0x7;
    public const CANCEL = 0x8;
    public const COMPRESSION_ERROR = 0x9;
    public const CONNECT_ERROR = 0xa;
    public const ENHANCE_YOUR_CALM = 0xb;
    public const INADEQUATE_SECURITY = 0xc;
    public const HTTP_1_1_REQUIRED = 0xd;

    /** The initial flow-control window of every stream and of the connection (§6.9.2). */
    public const DEFAULT_WINDOW = 65535;
    public const MAX_WINDOW = 0x7fffffff;
    /** The smallest SETTINGS_MAX_FRAME_SIZE, and the default (§6.5.2). */
    public const MIN_FRAME_SIZE = 16384;
    public const MAX_FRAME_SIZE = 16777215;

    public static function frame(int $type, int $flags, int $stream, string $payload = ''): string
    {
        $length = \strlen($payload);
        return \pack('CnCCN', $length >> 16, $length & 0xffff, $type, $flags, $stream) . $payload;
    }

    /** @param array<int, int> $settings identifier => value */
    public static function settings(array $settings): string
    {
        $payload = '';
        foreach ($settings as $id => $value) {
            $payload .= \pack('nN', $id, $value);
        }
        return self::frame(self::SETTINGS, 0, 0, $payload);
    }

    public static function goaway(int $lastStream, int $error, string $debug = ''): string
    {
        return self::frame(self::GOAWAY, 0, 0, \pack('NN', $lastStream, $error) . $debug);
    }

    public static function reset(int $stream, int $error): string
    {
        return self::frame(self::RST_STREAM, 0, $stream, \pack('N', $error));
    }

    public static function windowUpdate(int $stream, int $increment): string
    {
        return self::frame(self::WINDOW_UPDATE, 0, $stream, \pack('N', $increment));
    }

    /** The name of an error code, for logs. */
    public static function errorName(int $code): string
    {
        return [
            'NO_ERROR', 'PROTOCOL_ERROR', 'INTERNAL_ERROR', 'FLOW_CONTROL_ERROR', 'SETTINGS_TIMEOUT', 'STREAM_CLOSED',
            'FRAME_SIZE_ERROR', 'REFUSED_STREAM', 'CANCEL', 'COMPRESSION_ERROR', 'CONNECT_ERROR', 'ENHANCE_YOUR_CALM',
            'INADEQUATE_SECURITY', 'HTTP_1_1_REQUIRED',
        ][$code] ?? \sprintf('0x%x', $code);
    }
}
