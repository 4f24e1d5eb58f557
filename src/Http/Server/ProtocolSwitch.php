<?php

declare(strict_types=1);

namespace Weft\Http\Server;

use Weft\Http\Message\Response;
use Weft\Http\Message\Upgrade;
use Weft\Server\Connection;

/** An upgrade the HTTP session can hand its connection to, once the 101 is decided (WebSocket's). */
interface ProtocolSwitch extends Upgrade
{
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
