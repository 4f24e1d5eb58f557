<?php

declare(strict_types=1);

namespace Weft\WebSocket;

/** The Hub's distributed backend could not answer (Redis unreachable); the cause is the previous exception. */
final class HubUnavailable extends \RuntimeException implements \Weft\WeftException
{
    public static function presence(string $room, \Throwable $previous): self
    {
        return new self("Cannot count the members of room '$room' across workers: {$previous->getMessage()}", 0, $previous);
    }

    /** The backend's subscription to Redis broke at $since (a Unix time) and is being reopened. */
    public static function down(float $since): self
    {
        return new self(\sprintf('Redis has been unreachable for %.1f s (reconnecting)', \max(0.0, \microtime(true) - $since)));
    }
}
