<?php

declare(strict_types=1);

namespace Weft\Socket\Tls;

/**
 * The session ticket keys of one server instance: every worker derives the same keys from one secret
 * made when the instance starts (inherited through fork, so reloads keep it), a new key each ROTATION
 * seconds. A ticket is encrypted with the current key and accepted under the previous and the next one
 * too (a worker whose timer has not fired yet at the turn of a period), so it lives one to two periods.
 * The secret itself stays in memory for the instance's life, as nginx's own ticket key does when none
 * is configured; a restart makes a new one (and every outstanding ticket gives a full handshake).
 *
 * Used only with the native extension (Weft\Ext\tlsShareTickets(), see ext/weft_tls.c for why PHP's
 * stream layer alone cannot resume sessions).
 */
final class TicketKeys
{
    public const ROTATION = 3600;
    /** Seconds a ticket is offered for (the lifetime hint): within what the keys accept. */
    public const LIFETIME = self::ROTATION;
    private const KEY_BYTES = 80;

    public function __construct(private readonly string $secret)
    {
        if (\strlen($secret) < 32) {
            throw new \InvalidArgumentException('The ticket secret must hold at least 32 bytes');
        }
    }

    public static function generate(): self
    {
        return new self(\random_bytes(32));
    }

    /** The period a moment falls in. */
    public static function period(float $time): int
    {
        return \intdiv((int) $time, self::ROTATION);
    }

    /** Current, previous and next keys for $period, as Weft\Ext\tlsTicketKeys() takes them. */
    public function keysFor(int $period): string
    {
        return $this->key($period) . $this->key($period - 1) . $this->key($period + 1);
    }

    private function key(int $period): string
    {
        return \hash_hkdf('sha256', $this->secret, self::KEY_BYTES, 'weft tls session ticket key', \pack('J', $period));
    }
}
