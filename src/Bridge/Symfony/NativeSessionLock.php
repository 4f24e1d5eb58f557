<?php

declare(strict_types=1);

namespace Weft\Bridge\Symfony;

use Symfony\Component\HttpKernel\Event\RequestEvent;
use Symfony\Component\HttpKernel\KernelEvents;
use Symfony\Component\HttpKernel\KernelInterface;
use Symfony\Contracts\EventDispatcher\EventDispatcherInterface;
use Weft\Coroutine\Channel;

/**
 * One request with a session at a time per worker, when kernels serve requests concurrently.
 *
 * Symfony's session storage is PHP's own session module (NativeSessionStorage: session_start(),
 * $_SESSION, one active session per process), whichever handler saves it. A second request starting
 * its session while the first one's is active would fail ("already started by PHP"), and $_SESSION
 * cannot follow the coroutine (the session bags hold references into it). So the first time a
 * request asks for its session, it waits until no other request of the worker holds one; it gives
 * the turn back when it is over (the session was saved with the response). Requests that never touch
 * the session are not held.
 *
 * Until a worker boots its second kernel, one request at a time is in the framework and nothing is
 * guarded: a pool that never grows (a route that never waits) pays nothing per request. The kernel
 * already booted is serving a request when the second boots (a kernel boots only when every booted
 * one is busy), and that request went past the point where its session would have been guarded: its
 * session, started or still to come, holds the turn until that request is over.
 *
 * @internal
 */
final class NativeSessionLock
{
    private readonly Channel $turn;
    private ?object $holder = null;
    /** @var ?array{KernelInterface, object} the worker's only kernel so far, not guarded */
    private ?array $alone = null;
    private bool $concurrent = false;

    public function __construct()
    {
        $this->turn = new Channel(1);
    }

    /**
     * A kernel of the pool booted. From the second on, every kernel's sessions take turns.
     *
     * @param bool $othersInFlight whether the kernels booted before are serving a request now
     */
    public function booted(KernelInterface $kernel, object $owner, bool $othersInFlight): void
    {
        if ($this->concurrent) {
            $this->guard($kernel, $owner);
            return;
        }
        if ($this->alone === null) {
            $this->alone = [$kernel, $owner];
            return;
        }
        $this->concurrent = true;
        [$first, $firstOwner] = $this->alone;
        $this->alone = null;
        $this->guard($first, $firstOwner);
        if ($othersInFlight) {
            // The channel is empty (nobody took a turn before now): this does not wait.
            $this->turn->send(true);
            $this->holder = $firstOwner;
        }
        $this->guard($kernel, $owner);
    }

    /** Makes the session factory of each main request of $kernel wait for the turn first. */
    private function guard(KernelInterface $kernel, object $owner): void
    {
        $container = $kernel->getContainer();
        if (!$container->has('event_dispatcher') || !$container->hasParameter('session.storage.options')) {
            return;
        }
        $dispatcher = $container->get('event_dispatcher');
        if (!$dispatcher instanceof EventDispatcherInterface) {
            return;
        }
        // After Symfony's SessionListener (priority 128) has given the request its session factory.
        $dispatcher->addListener(KernelEvents::REQUEST, function (RequestEvent $event) use ($owner): void {
            if (!$event->isMainRequest()) {
                return;
            }
            $request = $event->getRequest();
            $factory = (fn (): mixed => $this->session)->call($request);
            if (!$factory instanceof \Closure) {
                return;
            }
            $request->setSessionFactory(function () use ($factory, $owner): mixed {
                $this->take($owner);
                return $factory();
            });
        }, 127);
    }

    /** Gives the turn back if $owner holds it. */
    public function release(object $owner): void
    {
        if ($this->holder === $owner) {
            $this->holder = null;
            $this->turn->receive();
        }
    }

    private function take(object $owner): void
    {
        if ($this->holder === $owner) {
            return;
        }
        if (\Weft\current() === null) {
            // Called directly, outside the server: nothing runs concurrently.
            return;
        }
        $this->turn->send(true);
        $this->holder = $owner;
    }
}
