<?php

declare(strict_types=1);

namespace Weft\WebSocket;

use Weft\Http\Message\HeaderBlock;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;

/**
 * The server's side of the opening handshake (RFC 6455 4.2): checks the request and answers it with a
 * 101 (Sec-WebSocket-Accept, the chosen subprotocol) or with the error it deserves.
 *
 * @internal use WebSocket::upgrade()
 */
final class Handshake
{
    private const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

    /** @param (\Closure(WebSocket): void)|Handler $handler */
    public static function answer(Request $request, \Closure|Handler $handler, ?WebSocketOptions $options): Response
    {
        if ($request->method() !== 'GET') {
            return self::error(405, 'A WebSocket handshake is a GET request', ['Allow' => 'GET']);
        }
        if (!HeaderBlock::listHas($request->header('upgrade') ?? '', 'websocket')) {
            return self::error(426, 'This resource speaks WebSocket only', ['Upgrade' => 'websocket', 'Connection' => 'Upgrade']);
        }
        if ($request->version() !== '1.1') {
            return self::error(400, 'A WebSocket handshake needs HTTP/1.1');
        }
        if (!HeaderBlock::listHas($request->header('connection') ?? '', 'upgrade')) {
            return self::error(400, 'A WebSocket handshake needs "Connection: Upgrade"');
        }
        if (\trim((string) $request->header('sec-websocket-version')) !== '13') {
            return self::error(426, 'Unsupported WebSocket version: this server speaks version 13', ['Sec-WebSocket-Version' => '13']);
        }
        $key = \trim((string) $request->header('sec-websocket-key'));
        $decoded = \base64_decode($key, true);
        if (\strlen($key) !== 24 || $decoded === false || \strlen($decoded) !== 16) {
            return self::error(400, 'Sec-WebSocket-Key must be 16 bytes in base64');
        }
        if ($options?->origins !== null && !\in_array($request->header('origin'), $options->origins, true)) {
            return self::error(403, 'Origin not allowed');
        }
        $headers = [
            'Upgrade' => 'websocket',
            'Connection' => 'Upgrade',
            'Sec-WebSocket-Accept' => self::accept($key),
        ];
        $protocol = $options === null ? null : self::protocol($request, $options->protocols);
        if ($protocol !== null) {
            $headers['Sec-WebSocket-Protocol'] = $protocol;
        }
        return Response::switchingProtocols(new Upgrade($request, $handler, $options, $protocol), $headers);
    }

    public static function accept(string $key): string
    {
        return \base64_encode(\sha1($key . self::GUID, true));
    }

    /** @param list<string> $supported */
    private static function protocol(Request $request, array $supported): ?string
    {
        $offered = $request->header('sec-websocket-protocol');
        if ($offered === null || $supported === []) {
            return null;
        }
        $offered = \array_map('trim', \explode(',', $offered));
        foreach ($supported as $protocol) {
            if (\in_array($protocol, $offered, true)) {
                return $protocol;
            }
        }
        return null;
    }

    /** @param array<string, string> $headers */
    private static function error(int $status, string $message, array $headers = []): Response
    {
        return Response::text($message . "\n", $status, $headers);
    }
}
