<?php

declare(strict_types=1);

namespace Weft\Socket;

/** How to open a client connection. Immutable: each withX() returns a copy. */
final class ConnectOptions
{
    public const DEFAULT_CONNECT_TIMEOUT = 10.0;

    private function __construct(
        public readonly float $connectTimeout = self::DEFAULT_CONNECT_TIMEOUT,
        public readonly bool $tcpNoDelay = true,
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
        return new self($seconds, $this->tcpNoDelay);
    }

    public function withTcpNoDelay(bool $noDelay = true): self
    {
        return new self($this->connectTimeout, $noDelay);
    }
}
