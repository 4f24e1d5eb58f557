<?php

declare(strict_types=1);

namespace Weft\WebSocket;

/**
 * The default Hub backend: nothing beyond the worker. A worker is one process, so rooms, messages and
 * presence counts cover the connections of this worker only; with `--workers` above 1, or several
 * instances behind a load balancer, members of one room land in different workers and do not see each
 * other's messages. Use RedisBackend for those.
 */
final class LocalBackend implements HubBackend
{
    public function attach(\Closure $deliver): void
    {
    }

    public function publish(string $room, string $data, bool $binary, int $local): Published
    {
        return Published::localOnly($local);
    }

    public function membersChanged(string $room, int $local): void
    {
    }

    public function presence(string $room, int $local): int
    {
        return $local;
    }

    public function stats(): array
    {
        return ['backend' => 'local'];
    }

    public function close(): void
    {
    }
}
