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
use Weft\Bridge\Instance;
use Weft\Bridge\InstancePool;
use Weft\Bridge\HttpFoundation\RequestConverter;
use Weft\Bridge\HttpFoundation\ResponseConverter;
use Weft\Bridge\HttpFoundation\PhpGlobals;
use Weft\Bridge\LeakDetector;
use Weft\Coroutine\ProcessState;
use Weft\Coroutine\StateSet;
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
 *
 * A worker holds a pool of kernels (BridgeOptions::$instances, `--app-instances`), each booted once
 * and serving one request at a time, so that requests waiting on the database or an upstream do not
 * hold the worker. A kernel is one object graph (container, request stack, session, security token,
 * Doctrine connections): nothing of one request is reachable from another kernel. What Symfony
 * keeps process-wide (the superglobals and intl's default locale a request may set, VarDumper's
 * handler in debug mode) follows the coroutine.
 */
final class SymfonyHandler
{
    /**
     * Process-wide state a Symfony request may change, besides PhpGlobals': VarDumper's handler, which
     * DebugBundle points at one kernel's dumper (and its data collector) in debug mode.
     */
    public const STATICS = [
        'Symfony\Component\VarDumper\VarDumper' => ['handler' => 'dump() writes through one kernel\'s dumper and profiler'],
    ];

    private readonly RequestConverter $requests;
    private readonly ResponseConverter $responses;
    /** @var InstancePool<SymfonyInstance> */
    private readonly InstancePool $pool;
    private readonly ?LeakDetector $leaks;
    private readonly LoggerInterface $logger;
    private readonly ?NativeSessionLock $sessions;

    /**
     * @param HttpKernelInterface $kernel the first kernel (booted here when it is a Kernel)
     * @param null|\Closure(): HttpKernelInterface $factory makes a further kernel when the pool grows;
     *        without one the pool holds $kernel alone
     */
    public function __construct(
        HttpKernelInterface $kernel,
        ?BridgeOptions $options = null,
        ?\Closure $factory = null,
        bool $boot = true,
    ) {
        self::declareRuntimeMode();
        $options ??= BridgeOptions::fromEnvironment();
        foreach (self::STATICS as $class => $properties) {
            foreach ($properties as $property => $_) {
                ProcessState::followStatic($class, $property);
            }
        }
        PhpGlobals::follow();
        $pristine = StateSet::capture();
        $first = $kernel;
        $size = $factory === null ? 1 : $options->instances;
        $sessions = $this->sessions = $size > 1 ? new NativeSessionLock() : null;
        $pool = null;
        $make = static function () use (&$first, &$pool, $factory, $boot, $sessions): SymfonyInstance {
            $kernel = $first ?? $factory();
            $first = null;
            if (!$kernel instanceof HttpKernelInterface) {
                throw new \UnexpectedValueException('The kernel factory must return a Symfony HttpKernelInterface, got ' . get_debug_type($kernel));
            }
            if ($boot && $kernel instanceof KernelInterface) {
                $kernel->boot();
            }
            $instance = new SymfonyInstance($kernel);
            if ($sessions !== null && $kernel instanceof KernelInterface) {
                // In flight: the request this kernel boots for, and one on each kernel booted before.
                $sessions->booted($kernel, $instance, $pool !== null && $pool->load()['inFlight'] > 1);
            }
            return $instance;
        };
        $pool = $this->pool = new InstancePool($make, $size, $pristine);
        $this->pool->warm();
        $this->requests = new RequestConverter($options->server);
        $this->responses = new ResponseConverter();
        $this->logger = $options->logger();
        if ($factory === null && $options->instances > 1) {
            $this->logger->notice('SymfonyHandler was given one kernel whose constructor is not Symfony\'s (environment, debug): it serves one request at a time. Pass a factory to SymfonyHandler::fromFactory() for one kernel per --app-instances');
        }
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
        return new self($kernel, $options, self::sameKernel($kernel), $boot);
    }

    /**
     * For a kernel made some other way than `new Kernel($environment, $debug)`: $factory makes one
     * kernel (called once per instance of the pool, the first time at once).
     *
     * @param \Closure(): HttpKernelInterface $factory
     */
    public static function fromFactory(\Closure $factory, ?BridgeOptions $options = null): self
    {
        self::declareRuntimeMode();
        $kernel = $factory();
        if ($options === null && $kernel instanceof KernelInterface) {
            $options = BridgeOptions::fromEnvironment(debug: $kernel->isDebug(), environment: $kernel->getEnvironment());
        }
        return new self($kernel, $options, $factory);
    }

    /**
     * Another kernel like $kernel, when its class is built the way Symfony's own is (environment and
     * debug flag, as KernelTestCase makes them); null when it is not, and the pool holds $kernel alone.
     *
     * @return null|\Closure(): HttpKernelInterface
     */
    private static function sameKernel(HttpKernelInterface $kernel): ?\Closure
    {
        if (!$kernel instanceof Kernel) {
            return null;
        }
        $constructor = (new \ReflectionClass($kernel))->getConstructor();
        if ($constructor === null || $constructor->getDeclaringClass()->getName() !== Kernel::class) {
            return null;
        }
        $class = $kernel::class;
        $environment = $kernel->getEnvironment();
        $debug = $kernel->isDebug();
        return static fn (): HttpKernelInterface => new $class($environment, $debug);
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

    /** Kernels booted so far in this worker (at most the pool's size). */
    public function instances(): int
    {
        return $this->pool->booted();
    }

    public function __invoke(Request $request): Response
    {
        $instance = $this->pool->acquire();
        $leakToken = $this->leaks?->begin();
        /** @var SymfonyInstance $symfony */
        $symfony = $instance->framework;
        $symfonyRequest = null;
        $symfonyResponse = null;
        $finished = false;
        $uploads = [];
        $globals = 0;
        // Once, whoever gets there first: the handler, the end of a streamed body (in the connection's
        // writer: it runs with this kernel's state in place), or its guard.
        $finish = function () use ($leakToken, $instance, $symfony, &$symfonyRequest, &$symfonyResponse, &$finished, &$uploads, &$globals, $request): void {
            if (!$finished) {
                $finished = true;
                $instance->run(function () use ($leakToken, $instance, $symfony, $symfonyRequest, $symfonyResponse, &$uploads, &$globals, $request): void {
                    try {
                        $this->finish($leakToken, $instance, $symfony, $request, $symfonyRequest, $symfonyResponse);
                    } finally {
                        // As PHP does with uploads: removed once the request is over, terminate included.
                        RequestConverter::remove($uploads);
                        $symfony->globals->leave($globals);
                    }
                });
            }
        };
        return $this->responses->answer(function () use ($symfony, $request, &$uploads, &$globals, &$symfonyRequest, &$symfonyResponse): array {
            $symfonyRequest = $this->requests->convert($request);
            $uploads = $this->requests->takeTemporaryFiles();
            $globals = $symfony->globals->enter($symfonyRequest);
            [$symfonyResponse, $echoed] = ResponseConverter::capture(
                fn () => $symfony->kernel->handle($symfonyRequest, HttpKernelInterface::MAIN_REQUEST, true),
            );
            return [$symfonyResponse, $echoed, \Weft\current() !== null && $symfony->terminateListeners()];
        }, $request->method() === 'HEAD', $finish, $instance->run(...));
    }

    /** @param Instance<SymfonyInstance> $instance */
    private function finish(?int $leakToken, Instance $instance, SymfonyInstance $symfony, Request $request, ?SymfonyRequest $symfonyRequest, ?SymfonyResponse $symfonyResponse): void
    {
        $kernel = $symfony->kernel;
        try {
            if ($symfonyRequest !== null && $symfonyResponse !== null && $kernel instanceof TerminableInterface) {
                try {
                    $kernel->terminate($symfonyRequest, $symfonyResponse);
                } catch (\Throwable $e) {
                    // The response stands (under PHP-FPM it has left by now): the failure is logged.
                    $this->logger->error('{request}: kernel.terminate failed after the response: {message}', [
                        'request' => $request->method() . ' ' . $request->target(), 'message' => $e->getMessage(), 'exception' => $e,
                    ]);
                }
            }
            if ($kernel instanceof Kernel) {
                // After terminate() a booted Kernel resets its kernel.reset services at its next
                // boot(); calling it now does exactly that, once.
                $kernel->boot();
            }
        } finally {
            try {
                $this->leaks?->check($request->method() . ' ' . $request->path(), $symfony->services(), $leakToken, $instance->number);
            } finally {
                $this->sessions?->release($symfony);
                $this->pool->release($instance);
            }
        }
    }
}
