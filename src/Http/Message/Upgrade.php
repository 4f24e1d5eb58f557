<?php

declare(strict_types=1);

namespace Weft\Http\Message;

/**
 * What a 101 response switches the connection to (WebSocket). The HTTP session writes nothing for such
 * a response: it hands the connection over, with whatever bytes followed the request, to an upgrade that
 * takes one (Weft\Http\Server\ProtocolSwitch; a message knows no connection); any other is a 500.
 */
interface Upgrade
{
    /**
     * Bytes the connection holds while open and idle once switched, charged against the worker's
     * budget of upgraded connections (HttpOptions::$upgradeMemory) until it closes; a switch that does
     * not fit is refused with a 503 instead.
     */
    public function cost(): int;
}
