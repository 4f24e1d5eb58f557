<?php

declare(strict_types=1);

namespace Weft\Client\Http\Internal;

use Weft\Socket\Socket;

/**
 * One client connection to an origin, kept open between requests.
 *
 * @internal owned by Client
 */
final class Connection
{
    public int $requests = 0;
    public float $idleSince = 0.0;

    public function __construct(public readonly Socket $socket, public readonly string $key)
    {
    }

    /**
     * Whether an idle connection can take another request, judged without waiting: the server has
     * neither closed it nor sent anything unasked (both make the socket readable). A TLS socket may
     * also be readable for a record that carries no data (a TLS 1.3 session ticket): a non-blocking
     * read consumes it and tells the cases apart.
     */
    public function isReusable(): bool
    {
        if ($this->socket->isClosed() || $this->socket->buffered() > 0) {
            return false;
        }
        $resource = $this->socket->resource();
        $read = [$resource];
        $write = $except = null;
        if (@\stream_select($read, $write, $except, 0) !== 1) {
            return true;
        }
        $data = @\fread($resource, 1);
        return $data === '' && !\feof($resource);
    }

    public function close(): void
    {
        $this->socket->close();
    }
}
