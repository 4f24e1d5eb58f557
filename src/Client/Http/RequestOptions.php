<?php

declare(strict_types=1);

namespace Weft\Client\Http;

/** How one request is made. Immutable: each withX() returns a copy. A Client holds the defaults. */
final class RequestOptions
{
    public const DEFAULT_CONNECT_TIMEOUT = 10.0;
    public const DEFAULT_TIMEOUT = 30.0;
    public const DEFAULT_MAX_REDIRECTS = 5;
    public const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

    private function __construct(
        /** Seconds to open a connection (TCP and TLS). */
        public readonly float $connectTimeout = self::DEFAULT_CONNECT_TIMEOUT,
        /** Seconds for the whole call: connects, redirects and a retry included; null: no limit. */
        public readonly ?float $timeout = self::DEFAULT_TIMEOUT,
        /** Redirects followed at most; 0 returns the 3xx response itself. */
        public readonly int $maxRedirects = self::DEFAULT_MAX_REDIRECTS,
        /** Check the server's certificate and name (https). */
        public readonly bool $verifyPeer = true,
        /** A PEM file of trusted CAs instead of the system's. */
        public readonly ?string $caFile = null,
        /** Send Accept-Encoding: gzip, deflate and decode such bodies. */
        public readonly bool $decodeContent = true,
        /** Largest body accepted, before and after decoding. */
        public readonly int $maxBodyBytes = self::DEFAULT_MAX_BODY_BYTES,
        /** Reuse connections (keep-alive). */
        public readonly bool $keepAlive = true,
    ) {
    }

    public static function defaults(): self
    {
        return new self();
    }

    public function withConnectTimeout(float $seconds): self
    {
        if ($seconds <= 0) {
            throw new \InvalidArgumentException('The connect timeout must be positive');
        }
        return $this->copy(['connectTimeout' => $seconds]);
    }

    public function withTimeout(?float $seconds): self
    {
        if ($seconds !== null && $seconds <= 0) {
            throw new \InvalidArgumentException('The request timeout must be positive (or null for none)');
        }
        return $this->copy(['timeout' => $seconds]);
    }

    public function withMaxRedirects(int $max): self
    {
        if ($max < 0) {
            throw new \InvalidArgumentException('The redirect limit cannot be negative');
        }
        return $this->copy(['maxRedirects' => $max]);
    }

    public function withVerifyPeer(bool $verify): self
    {
        return $this->copy(['verifyPeer' => $verify]);
    }

    public function withCaFile(?string $path): self
    {
        return $this->copy(['caFile' => $path]);
    }

    public function withDecodeContent(bool $decode): self
    {
        return $this->copy(['decodeContent' => $decode]);
    }

    public function withMaxBodyBytes(int $bytes): self
    {
        if ($bytes < 0) {
            throw new \InvalidArgumentException('The body limit cannot be negative');
        }
        return $this->copy(['maxBodyBytes' => $bytes]);
    }

    public function withKeepAlive(bool $keepAlive): self
    {
        return $this->copy(['keepAlive' => $keepAlive]);
    }

    /** @return array<string, mixed> stream context "ssl" options */
    public function tlsContext(): array
    {
        $ssl = [
            'verify_peer' => $this->verifyPeer,
            'verify_peer_name' => $this->verifyPeer,
            'allow_self_signed' => !$this->verifyPeer,
        ];
        if ($this->caFile !== null) {
            $ssl['cafile'] = $this->caFile;
        }
        return $ssl;
    }

    private function copy(array $changes): self
    {
        return new self(...\array_merge(\get_object_vars($this), $changes));
    }
}
