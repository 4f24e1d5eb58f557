<?php

declare(strict_types=1);

namespace Weft\Server;

/**
 * A wire protocol as the server core sees it: a codec plus a dispatch. The core (Connections,
 * Connection) owns everything else: the connection table and ids, reading, the one writer per
 * connection, backpressure, timers, drain, refusal and stats. HTTP and the line protocol implement this.
 */
interface Protocol
{
    /** The protocol's state for one new connection. */
    public function open(Connection $connection): Session;

    /** What a connection the worker cannot take (over --max-connections) is told before it is closed. */
    public function refusal(string $reason): string;

    public function timeouts(): Timeouts;
}
