<?php

declare(strict_types=1);

namespace Weft\Bridge\Symfony;

use Symfony\Component\EventDispatcher\EventDispatcherInterface;
use Symfony\Component\HttpKernel\HttpKernelInterface;
use Symfony\Component\HttpKernel\KernelEvents;
use Symfony\Component\HttpKernel\KernelInterface;
use Weft\Bridge\HttpFoundation\PhpGlobals;

/**
 * One booted kernel of a worker's pool, with what the bridge keeps beside it.
 *
 * @internal
 */
final class SymfonyInstance
{
    public readonly PhpGlobals $globals;
    private ?bool $terminateListeners = null;

    public function __construct(public readonly HttpKernelInterface $kernel)
    {
        $this->globals = new PhpGlobals();
    }

    /**
     * Whether kernel.terminate has listeners (a mailer sending what it spooled, a profiler saving):
     * then the response goes out before terminate() runs, as under PHP-FPM with
     * fastcgi_finish_request(). Without any, the plain (faster) path sends the body after it.
     */
    public function terminateListeners(): bool
    {
        if ($this->terminateListeners === null) {
            $dispatcher = null;
            if ($this->kernel instanceof KernelInterface && $this->kernel->getContainer()->has('event_dispatcher')) {
                $dispatcher = $this->kernel->getContainer()->get('event_dispatcher');
            }
            $this->terminateListeners = $dispatcher instanceof EventDispatcherInterface && $dispatcher->hasListeners(KernelEvents::TERMINATE);
        }
        return $this->terminateListeners;
    }

    /** @return iterable<string, object> the container's instantiated services, for the leak check */
    public function services(): iterable
    {
        if (!$this->kernel instanceof KernelInterface) {
            return [];
        }
        $container = $this->kernel->getContainer();
        // Compiled containers keep their instances in protected $services / $privates; reading them
        // by reflection instantiates nothing.
        $services = [];
        foreach (['services', 'privates'] as $property) {
            if (!property_exists($container, $property)) {
                continue;
            }
            $reflection = new \ReflectionProperty($container, $property);
            foreach ($reflection->getValue($container) as $id => $service) {
                if (\is_object($service) && $service !== $container) {
                    $services[(string) $id] = $service;
                }
            }
        }
        return $services;
    }
}
