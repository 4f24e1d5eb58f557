<?php

declare(strict_types=1);

namespace Weft\WebSocket;

/**
 * What became of one Hub::publish(). The local delivery always happens first; $sent says whether the
 * message also went on to the other workers. A message that did not is reported here, counted in
 * Hub::stats() and logged: never dropped without a word.
 */
final class Published
{
    public function __construct(
        /** This worker's connections that took the message. */
        public readonly int $local,
        /** Handed to the backend for the other workers (always true for LocalBackend, which has none). */
        public readonly bool $sent,
        /**
         * For Redis: how many subscribed workers Redis passed it to (the publishing worker's own
         * subscription included, which ignores it); null when not known.
         */
        public readonly ?int $receivers = null,
        /** Why it was not sent, or why it is not known whether it was (a connection lost mid-reply). */
        public readonly ?\Throwable $error = null,
        /** True when the connection broke after the PUBLISH was written: Redis may or may not have run it. */
        public readonly bool $uncertain = false,
    ) {
    }

    public static function localOnly(int $local): self
    {
        return new self($local, true);
    }
}
