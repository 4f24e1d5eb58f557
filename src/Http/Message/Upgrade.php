<?php

declare(strict_types=1);

namespace Weft\Http\Message;

use Weft\Server\Connection;

/**
 * What a 101 response switches the connection to (WebSocket). The HTTP session writes nothing for such
 * a response: it hands the connection over, with whatever bytes followed the request.
 */
interface Upgrade
{
    /**
     * Bytes the connection holds while open and idle once switched, charged against the worker's
     * budget of upgraded connections (HttpOptions::$upgradeMemory) until it closes; a switch that does
     * not fit is refused with a 503 instead.
     */
    public function cost(): int;

    /**
     * @param Response $response the 101, as the application's layers left it (extra headers included)
     * @param string $buffered bytes the client sent after the upgrade request
     * @param array<string, object> $defaults server-wide options by protocol name (HttpOptions::$upgrades),
     *   under 'budget' the worker's Weft\Server\ReceiveBudget, which the new protocol's input counts against,
     *   and under 'upgraded' its Weft\Server\ConnectionBudget, already charged cost() for this connection:
     *   the new protocol releases that charge when the connection closes
     */
    public function switchProtocols(Connection $connection, Response $response, string $buffered, array $defaults): void;
}
