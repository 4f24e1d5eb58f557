<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\Socket\Listener;
use Weft\Socket\ListenOptions;

/**
 * A second listening address whose connections a worker serves with a protocol of their own, beside
 * the main listener: the plain-HTTP listener that redirects to HTTPS (--redirect-http). Bound in the
 * master before the workers are forked, so a busy port stops the start. Its connections are small
 * and short: a drain closes them rather than waiting for them.
 */
final class ExtraListener
{
    private ?Listener $listener = null;

    /** @param \Closure(int): Protocol $protocolFactory called in each worker with the main listener's port */
    public function __construct(
        public readonly string $address,
        private readonly \Closure $protocolFactory,
        private readonly int $backlog = ListenOptions::DEFAULT_BACKLOG,
    ) {
    }

    /** @throws \Weft\Socket\ListenException */
    public function bind(): Listener
    {
        return $this->listener ??= Listener::listen($this->address, ListenOptions::defaults()->withBacklog($this->backlog));
    }

    public function listener(): Listener
    {
        return $this->listener ?? throw new \LogicException("The listener on {$this->address} was not bound before the workers started");
    }

    public function protocol(int $mainPort): Protocol
    {
        return ($this->protocolFactory)($mainPort);
    }
}
