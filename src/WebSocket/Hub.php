<?php

declare(strict_types=1);

namespace Weft\WebSocket;

use Weft\Client\Redis\Config;

/**
 * Rooms of WebSocket connections, publishing to a room and counting its members, in this worker and,
 * with a distributed backend, in every worker of every instance:
 *
 *     $hub = Hub::redis('redis://127.0.0.1:6379');   // or new Hub(): this worker only
 *     $hub->join($ws, 'lobby');
 *     $hub->publish('lobby', 'hello');               // every member, wherever it is connected
 *     $hub->presence('lobby');                       // members across instances
 *     $hub->leave($ws);                              // from every room: in onClose / finally
 *
 * A publish is delivered to this worker's members at once (encoding the frame once, never waiting for a
 * slow client: see WebSocket::broadcast()), then handed to the backend for the others. The Published it
 * returns says whether that second step happened.
 *
 * A member whose connection has closed is dropped at the next publish to its room; leave($ws) in
 * onClose (or a finally) drops it at once, from every room.
 *
 * Create one Hub per application (in the file the server loads: each worker gets its own, after fork)
 * and let it live as long as the worker. Works with both handler forms.
 */
final class Hub
{
    public const MAX_ROOM_BYTES = 200;

    /** @var array<string, array<int, WebSocket>> room => connection id => connection */
    private array $members = [];
    /** @var array<int, array<string, true>> connection id => rooms */
    private array $rooms = [];
    private bool $attached = false;

    public function __construct(private readonly HubBackend $backend = new LocalBackend())
    {
    }

    /**
     * A Hub whose rooms span every worker that uses the same Redis and prefix (see RedisBackend).
     *
     * @param string $prefix keys and the channel are named after it: apps sharing a Redis use their own
     */
    public static function redis(Config|string $redis, string $prefix = RedisBackend::DEFAULT_PREFIX): self
    {
        return new self(new RedisBackend($redis, $prefix));
    }

    /** Adds $ws to $room (again: nothing changes). */
    public function join(WebSocket $ws, string $room): void
    {
        self::checkRoom($room);
        $this->attach();
        if (isset($this->members[$room][$ws->id])) {
            return;
        }
        if (!$ws->isOpen()) {
            return; // it would never leave: onClose may already have run
        }
        $this->members[$room][$ws->id] = $ws;
        $this->rooms[$ws->id][$room] = true;
        $this->backend->membersChanged($room, \count($this->members[$room]));
    }

    /** Takes $ws out of $room, or out of every room it is in (null: what onClose and finally want). */
    public function leave(WebSocket $ws, ?string $room = null): void
    {
        $rooms = $room === null ? \array_keys($this->rooms[$ws->id] ?? []) : [$room];
        foreach ($rooms as $name) {
            $name = (string) $name;
            if (!isset($this->members[$name][$ws->id])) {
                continue;
            }
            unset($this->members[$name][$ws->id], $this->rooms[$ws->id][$name]);
            $left = \count($this->members[$name]);
            if ($left === 0) {
                unset($this->members[$name]);
            }
            $this->backend->membersChanged($name, $left);
        }
        if (($this->rooms[$ws->id] ?? null) === []) {
            unset($this->rooms[$ws->id]);
        }
    }

    /**
     * Sends a message to every member of $room: this worker's now, the other workers' through the
     * backend. $except (the sender, usually) is skipped here; it is connected to this worker only.
     */
    public function publish(string $room, string|Message $message, bool $binary = false, ?WebSocket $except = null): Published
    {
        self::checkRoom($room);
        $this->attach();
        if ($message instanceof Message) {
            $binary = $message->binary;
            $message = $message->data;
        }
        $local = $this->deliver($room, $message, $binary, $except);
        return $this->backend->publish($room, $message, $binary, $local);
    }

    /**
     * Members of $room in every worker the backend reaches (this worker's only, with LocalBackend).
     *
     * @throws HubUnavailable when the distributed backend cannot be asked
     */
    public function presence(string $room): int
    {
        self::checkRoom($room);
        $this->attach();
        return $this->backend->presence($room, \count($this->members[$room] ?? []));
    }

    /** Members of $room connected to this worker. */
    public function localPresence(string $room): int
    {
        return \count($this->members[$room] ?? []);
    }

    /** @return list<string> the rooms $ws is in */
    public function rooms(WebSocket $ws): array
    {
        return \array_map('strval', \array_keys($this->rooms[$ws->id] ?? []));
    }

    /** @return list<WebSocket> this worker's members of $room */
    public function members(string $room): array
    {
        return \array_values($this->members[$room] ?? []);
    }

    /** @return array<string, int|float|string|bool|null> */
    public function stats(): array
    {
        return ['rooms' => \count($this->members), 'connections' => \count($this->rooms)] + $this->backend->stats();
    }

    public function close(): void
    {
        $this->backend->close();
    }

    private function deliver(string $room, string $data, bool $binary, ?WebSocket $except = null): int
    {
        $members = $this->members[$room] ?? [];
        if ($except !== null) {
            unset($members[$except->id]);
        }
        if ($members === []) {
            return 0;
        }
        $sent = WebSocket::broadcast($members, $data, $binary);
        if ($sent < \count($members)) {
            // A member that has gone without a leave() (a handler that forgot it in onClose) would
            // otherwise be held, and counted in presence, for the worker's life.
            foreach ($members as $member) {
                if (!$member->isOpen()) {
                    $this->leave($member);
                }
            }
        }
        return $sent;
    }

    /** Late, so that the backend starts its background work in the worker, never in a process that forks. */
    private function attach(): void
    {
        if (!$this->attached) {
            $this->attached = true;
            $this->backend->attach(fn (string $room, string $data, bool $binary): int => $this->deliver($room, $data, $binary));
        }
    }

    private static function checkRoom(string $room): void
    {
        if ($room === '' || \strlen($room) > self::MAX_ROOM_BYTES) {
            throw new \InvalidArgumentException('A room name is 1 to ' . self::MAX_ROOM_BYTES . ' bytes, got ' . \strlen($room));
        }
    }
}
