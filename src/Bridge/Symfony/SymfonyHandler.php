<?php

declare(strict_types=1);

namespace Weft\Bridge\Symfony;

use Symfony\Component\EventDispatcher\EventDispatcherInterface;
use Symfony\Component\HttpFoundation\Request as SymfonyRequest;
use Symfony\Component\HttpFoundation\Response as SymfonyResponse;
use Symfony\Component\HttpKernel\HttpKernelInterface;
use Symfony\Component\HttpKernel\Kernel;
use Symfony\Component\HttpKernel\KernelEvents;
use Symfony\Component\HttpKernel\KernelInterface;
use Symfony\Component\HttpKernel\TerminableInterface;
use Psr\Log\LoggerInterface;
use Weft\Bridge\BridgeOptions;
use Weft\Bridge\Gate;
use Weft\Bridge\HttpFoundation\RequestConverter;
use Weft\Bridge\HttpFoundation\ResponseConverter;
use Weft\Bridge\HttpFoundation\PhpGlobals;
use Weft\Bridge\LeakDetector;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;

/**
 * A Symfony HttpKernel application as a Weft handler.
 *
 * The kernel boots once per worker (at the first request, or in fromKernel() with boot: true);
 * every request is converted to an HttpFoundation request, handled, converted back and then
 * terminated (kernel.terminate listeners run, after the response is on the wire when there are any). After that the kernel's services_resetter resets
 * every service tagged kernel.reset (ResetInterface services: loggers' buffers, the request stack,
 * Doctrine's entity managers, ...), which is what Symfony itself does between two requests of a
 * long-running process; the bridge does it as soon as the response is out, not when the next
 * request comes, so nothing of the last request is held meanwhile and the leak check sees the
 * state the next request will see.
 */
final class SymfonyHandler
{
    private readonly RequestConverter $requests;
    private readonly ResponseConverter $responses;
    private readonly Gate $gate;
    private readonly PhpGlobals $globals;
    private readonly ?LeakDetector $leaks;
    private readonly LoggerInterface $logger;
    private ?bool $terminateListeners = null;

    public function __construct(
        private readonly HttpKernelInterface $kernel,
        ?BridgeOptions $options = null,
    ) {
        self::declareRuntimeMode();
        $options ??= BridgeOptions::fromEnvironment();
        $this->requests = new RequestConverter($options->server);
        $this->responses = new ResponseConverter();
        $this->gate = new Gate();
        $this->globals = new PhpGlobals();
        $this->logger = $options->logger();
        $this->leaks = $options->leakWarnings ? new LeakDetector($this->logger, $options->leakIgnore) : null;
    }

    /**
     * The usual entry file's one call. The kernel is booted here, in the worker, so the first request
     * does not pay for it and a broken container fails the worker's start, not a request.
     */
    public static function fromKernel(HttpKernelInterface $kernel, ?BridgeOptions $options = null, bool $boot = true): self
    {
        self::declareRuntimeMode();
        if ($options === null && $kernel instanceof KernelInterface) {
            $options = BridgeOptions::fromEnvironment(
                debug: $kernel->isDebug(),
                environment: $kernel->getEnvironment(),
            );
        }
        if ($boot && $kernel instanceof KernelInterface) {
            $kernel->boot();
        }
        return new self($kernel, $options);
    }

    /**
     * Tells Symfony it serves the web from a long-running worker, as its runtimes for RoadRunner and
     * FrankenPHP do: kernel.runtime_mode defaults to "cli" under the CLI SAPI, which would render
     * error pages as console dumps and set up logging for a terminal. Left alone when the
     * application sets APP_RUNTIME_MODE itself, and under php-fpm (fpm mode), where Symfony knows.
     */
    private static function declareRuntimeMode(): void
    {
        if (!\in_array(\PHP_SAPI, ['cli', 'phpdbg', 'embed'], true) || isset($_SERVER['APP_RUNTIME_MODE']) || getenv('APP_RUNTIME_MODE') !== false) {
            return;
        }
        $_SERVER['APP_RUNTIME_MODE'] = $_ENV['APP_RUNTIME_MODE'] = 'web=1&worker=1';
        putenv('APP_RUNTIME_MODE=web=1&worker=1');
    }

    public function __invoke(Request $request): Response
    {
        $this->gate->enter();
        $symfonyRequest = null;
        $symfonyResponse = null;
        $finished = false;
        $uploads = [];
        $globals = 0;
        // Once, whoever gets there first: the handler, the end of a streamed body, or its guard.
        $finish = function () use (&$symfonyRequest, &$symfonyResponse, &$finished, &$uploads, &$globals, $request): void {
            if (!$finished) {
                $finished = true;
                try {
                    $this->finish($request, $symfonyRequest, $symfonyResponse);
                } finally {
                    // As PHP does with uploads: removed once the request is over, terminate included.
                    RequestConverter::remove($uploads);
                    $this->globals->leave($globals);
                }
            }
        };
        try {
            $symfonyRequest = $this->requests->convert($request);
            $uploads = $this->requests->takeTemporaryFiles();
            $globals = $this->globals->enter($symfonyRequest);
            [$symfonyResponse, $echoed] = ResponseConverter::capture(
                fn () => $this->kernel->handle($symfonyRequest, HttpKernelInterface::MAIN_REQUEST, true),
            );
            [$response, $streamed] = $this->responses->convert(
                $symfonyResponse,
                $request->method() === 'HEAD',
                $finish,
                $echoed,
                finishAfterBody: $this->gate->guards() && $this->terminateListeners(),
            );
        } catch (\Throwable $e) {
            $finish();
            throw $e;
        }
        if (!$streamed) {
            $finish();
        }
        return $response;
    }

    private function finish(Request $request, ?SymfonyRequest $symfonyRequest, ?SymfonyResponse $symfonyResponse): void
    {
        try {
            if ($symfonyRequest !== null && $symfonyResponse !== null && $this->kernel instanceof TerminableInterface) {
                try {
                    $this->kernel->terminate($symfonyRequest, $symfonyResponse);
                } catch (\Throwable $e) {
                    // The response stands (under PHP-FPM it has left by now): the failure is logged.
                    $this->logger->error('{request}: kernel.terminate failed after the response: {message}', [
                        'request' => $request->method() . ' ' . $request->target(), 'message' => $e->getMessage(), 'exception' => $e,
                    ]);
                }
            }
            if ($this->kernel instanceof Kernel) {
                // After terminate() a booted Kernel resets its kernel.reset services at its next
                // boot(); calling it now does exactly that, once.
                $this->kernel->boot();
            }
        } finally {
            try {
                $this->leaks?->check($request->method() . ' ' . $request->path(), $this->services());
            } finally {
                $this->gate->leave();
            }
        }
    }

    /**
     * Whether kernel.terminate has listeners (a mailer sending what it spooled, a profiler saving):
     * then the response goes out before terminate() runs, as under PHP-FPM with
     * fastcgi_finish_request(). Without any, the plain (faster) path sends the body after it.
     */
    private function terminateListeners(): bool
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
    private function services(): iterable
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
