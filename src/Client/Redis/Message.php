<?php

declare(strict_types=1);

namespace Weft\Client\Redis;

/** A message received by a Subscriber. */
final class Message
{
    public function __construct(
        public readonly string $channel,
        public readonly string $payload,
        /** The pattern that matched, for messages received through psubscribe(). */
        public readonly ?string $pattern = null,
    ) {
    }
}
