<?php

declare(strict_types=1);

namespace App;

use Symfony\Component\Config\Loader\LoaderInterface;
use Symfony\Component\DependencyInjection\Argument\IteratorArgument;
use Symfony\Component\DependencyInjection\ContainerBuilder;
use Symfony\Component\DependencyInjection\Reference;
use Symfony\Component\ErrorHandler\ErrorRenderer\HtmlErrorRenderer;
use Symfony\Component\EventDispatcher\DependencyInjection\RegisterListenersPass;
use Symfony\Component\EventDispatcher\EventDispatcher;
use Symfony\Component\HttpFoundation\RequestStack;
use Symfony\Component\HttpKernel\Controller\ArgumentResolver;
use Symfony\Component\HttpKernel\Controller\ContainerControllerResolver;
use Symfony\Component\HttpKernel\Controller\ErrorController;
use Symfony\Component\HttpKernel\DependencyInjection\ResettableServicePass;
use Symfony\Component\HttpKernel\DependencyInjection\ServicesResetter;
use Symfony\Component\HttpKernel\EventListener\ErrorListener;
use Symfony\Component\HttpKernel\EventListener\ResponseListener;
use Symfony\Component\HttpKernel\EventListener\RouterListener;
use Symfony\Component\HttpKernel\HttpKernel;
use Symfony\Component\HttpKernel\Kernel as BaseKernel;
use Symfony\Component\Routing\Matcher\UrlMatcher;
use Symfony\Component\Routing\RequestContext;
use Symfony\Component\Routing\RouteCollection;

/**
 * The services FrameworkBundle would register for an HttpKernel app (event dispatcher, router
 * listener, controller and argument resolvers, error listener rendering Symfony's error page,
 * services_resetter fed by kernel.reset tags), plus the app's own controllers and services.
 */
final class Kernel extends BaseKernel
{
    public function registerBundles(): iterable
    {
        return [];
    }

    protected function build(ContainerBuilder $container): void
    {
        $container->addCompilerPass(new RegisterListenersPass());
        $container->addCompilerPass(new ResettableServicePass());
    }

    public function registerContainerConfiguration(LoaderInterface $loader): void
    {
        $loader->load(static function (ContainerBuilder $c): void {
            $c->register('event_dispatcher', EventDispatcher::class)->setPublic(true);
            $c->register('request_stack', RequestStack::class)->setPublic(true);
            $c->register('router.context', RequestContext::class);
            $c->register('routes', RouteCollection::class)->setFactory([Routes::class, 'collection']);
            $c->register('router.matcher', UrlMatcher::class)
                ->setArguments([new Reference('routes'), new Reference('router.context')]);
            $c->register('controller_resolver', ContainerControllerResolver::class)
                ->setArguments([new Reference('service_container')]);
            $c->register('argument_resolver', ArgumentResolver::class);
            $c->register('http_kernel', HttpKernel::class)->setPublic(true)->setArguments([
                new Reference('event_dispatcher'),
                new Reference('controller_resolver'),
                new Reference('request_stack'),
                new Reference('argument_resolver'),
            ]);
            $c->register('router_listener', RouterListener::class)
                ->setArguments([new Reference('router.matcher'), new Reference('request_stack'), new Reference('router.context')])
                ->addTag('kernel.event_subscriber');
            $c->register('response_listener', ResponseListener::class)->setArguments(['UTF-8'])
                ->addTag('kernel.event_subscriber');
            $c->register('error_renderer', HtmlErrorRenderer::class)->setArguments(['%kernel.debug%']);
            $c->register('error_controller', ErrorController::class)->setPublic(true)->setArguments([
                new Reference('http_kernel'), 'error_controller', new Reference('error_renderer'),
            ]);
            $c->register('exception_listener', ErrorListener::class)->setArguments(['error_controller', null, '%kernel.debug%'])
                ->addTag('kernel.event_subscriber');
            $c->register('services_resetter', ServicesResetter::class)->setPublic(true)
                ->setArguments([new IteratorArgument([]), []]);

            // The app: a per-request counter that Symfony resets (kernel.reset), and one that it
            // does not (the state the bridge's leak warning is there to catch).
            $c->register(Counter::class)->addTag('kernel.reset', ['method' => 'reset']);
            $c->register(AfterResponseProbe::class)->setArguments(['%kernel.project_dir%'])
                ->addTag('kernel.event_subscriber');
            $c->register(Registry::class)->setPublic(true);
            $c->register(Controller\AppController::class)->setPublic(true)
                ->setArguments([new Reference(Counter::class), new Reference(Registry::class), '%kernel.project_dir%']);
        });
    }
}
