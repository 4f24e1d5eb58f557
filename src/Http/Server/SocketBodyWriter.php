<?php

declare(strict_types=1);

namespace Weft\Http\Server;

use Weft\Http\Message\BodyWriter;
use Weft\Http\Message\ResponseEncoder;
use Weft\Socket\Socket;

/** @internal Writes a streamed response body to the connection, chunk-encoded when given an encoder. */
final class SocketBodyWriter implements BodyWriter
{
    public function __construct(
        private readonly Socket $socket,
        private readonly ?ResponseEncoder $chunked,
        private readonly float $timeout,
    ) {
    }

    public function write(string $chunk): void
    {
        if ($chunk === '') {
            return;
        }
        $this->socket->write($this->chunked === null ? $chunk : $this->chunked->encodeChunk($chunk), $this->timeout);
    }
}
