<?php

declare(strict_types=1);

namespace Weft\Socket;

/** How to bind a listening socket. Immutable: each withX() returns a copy. */
final class ListenOptions
{
    /** Large enough that a burst never shows as SYN retransmits (1 s, 3 s tails); capped by somaxconn. */
    public const DEFAULT_BACKLOG = 4096;

    private function __construct(
        public readonly int $backlog = self::DEFAULT_BACKLOG,
        public readonly bool $reusePort = false,
        public readonly bool $tcpNoDelay = true,
        public readonly bool $ipv6Only = false,
    ) {
    }

    public static function defaults(): self
    {
        return new self();
    }

    public function withBacklog(int $backlog): self
    {
        if ($backlog < 1) {
            throw new \InvalidArgumentException('The backlog must be at least 1');
        }
        return new self($backlog, $this->reusePort, $this->tcpNoDelay, $this->ipv6Only);
    }

    public function withReusePort(bool $reusePort = true): self
    {
        return new self($this->backlog, $reusePort, $this->tcpNoDelay, $this->ipv6Only);
    }

    public function withTcpNoDelay(bool $noDelay = true): self
    {
        return new self($this->backlog, $this->reusePort, $noDelay, $this->ipv6Only);
    }

    public function withIpv6Only(bool $only = true): self
    {
        return new self($this->backlog, $this->reusePort, $this->tcpNoDelay, $only);
    }
}
