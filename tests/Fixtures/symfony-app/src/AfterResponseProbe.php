<?php

declare(strict_types=1);

namespace App;

use Symfony\Component\EventDispatcher\Attribute\AsEventListener;
use Symfony\Component\HttpKernel\Event\TerminateEvent;
use Symfony\Component\HttpKernel\KernelEvents;

/**
 * Work after the response, as a mailer's spool does: for /after-response?id=X it waits (5 s at
 * most) for the client to create var/flag-X, which it can only do once it has the response, and
 * records whether it saw it.
 */
#[AsEventListener(event: KernelEvents::TERMINATE)]
final class AfterResponseProbe
{
    public function __construct(private readonly string $projectDir)
    {
    }

    public function __invoke(TerminateEvent $event): void
    {
        if ($event->getRequest()->getPathInfo() === '/terminate-fails') {
            throw new \RuntimeException('the terminate listener failed on purpose');
        }
        if ($event->getRequest()->getPathInfo() !== '/after-response') {
            return;
        }
        $id = preg_replace('/[^a-z0-9]/', '', (string) $event->getRequest()->query->get('id'));
        $deadline = microtime(true) + 5.0;
        while (!is_file("$this->projectDir/var/flag-$id") && microtime(true) < $deadline) {
            usleep(10_000);
        }
        file_put_contents("$this->projectDir/var/after-$id.txt", is_file("$this->projectDir/var/flag-$id") ? 'saw the flag' : 'timed out');
    }
}
