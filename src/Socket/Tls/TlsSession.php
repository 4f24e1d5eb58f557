<?php

declare(strict_types=1);

namespace Weft\Socket\Tls;

/**
 * What a finished handshake agreed: the protocol version, the cipher and the ALPN protocol (null when the
 * client offered none). A protocol that serves more than HTTP/1.1 (h2) chooses by $alpn.
 */
final class TlsSession
{
    public function __construct(
        public readonly string $version,
        public readonly string $cipher,
        public readonly ?string $alpn,
    ) {
    }

    /** @param resource $stream a stream whose handshake has completed */
    public static function of(mixed $stream): self
    {
        $crypto = \stream_get_meta_data($stream)['crypto'] ?? [];
        return new self(
            (string) ($crypto['protocol'] ?? ''),
            (string) ($crypto['cipher_name'] ?? ''),
            isset($crypto['alpn_protocol']) ? (string) $crypto['alpn_protocol'] : null,
        );
    }
}
