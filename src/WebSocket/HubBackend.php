<?php

declare(strict_types=1);

namespace Weft\WebSocket;

/**
 * Where a Hub's messages and presence counts go beyond this worker's own connections.
 *
 * A backend MUST deliver every message published elsewhere (another worker, another instance) by
 * calling the $deliver closure given to attach(), in the worker that holds the members, and MUST NOT
 * deliver a message back to the worker that published it: the Hub has already delivered it there.
 * publish() MUST NOT throw for a backend that is unreachable: it says so in the Published it returns
 * and counts it (see stats()), since the local delivery has already happened by then.
 */
interface HubBackend
{
    /**
     * Called once by the Hub, in the worker. $deliver(string $room, string $data, bool $binary): int
     * hands a message to this worker's members of $room and returns how many took it.
     *
     * @param \Closure(string, string, bool): int $deliver
     */
    public function attach(\Closure $deliver): void;

    /** Sends a message on to the other workers; $local is how many of this worker's members took it. */
    public function publish(string $room, string $data, bool $binary, int $local): Published;

    /** This worker now has $local members in $room (0: none any more). */
    public function membersChanged(string $room, int $local): void;

    /**
     * Members of $room across every worker the backend knows of, $local being this worker's.
     *
     * @throws HubUnavailable when the count cannot be had
     */
    public function presence(string $room, int $local): int;

    /** @return array<string, int|float|string|bool|null> counters for logs and metrics */
    public function stats(): array;

    /** Stops whatever the backend runs in the background (a subscription, a heartbeat). */
    public function close(): void;
}
