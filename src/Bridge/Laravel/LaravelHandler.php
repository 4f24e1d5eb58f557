<?php

declare(strict_types=1);

namespace Weft\Bridge\Laravel;

use Illuminate\Container\Container;
use Illuminate\Contracts\Http\Kernel as HttpKernelContract;
use Illuminate\Foundation\Application;
use Illuminate\Http\Request as IlluminateRequest;
use Illuminate\Http\UploadedFile;
use Illuminate\Support\Facades\Facade;
use Illuminate\Support\Str;
use Psr\Log\LoggerInterface;
use Symfony\Component\HttpFoundation\Response as SymfonyResponse;
use Weft\Bridge\BridgeOptions;
use Weft\Bridge\Gate;
use Weft\Bridge\HttpFoundation\RequestConverter;
use Weft\Bridge\HttpFoundation\ResponseConverter;
use Weft\Bridge\LeakDetector;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;

/**
 * A Laravel application as a Weft handler.
 *
 * The application is created and bootstrapped once per worker (environment, configuration,
 * service providers registered and booted, the services every request uses resolved). Each
 * request then runs in a sandbox: a clone of that application, which shares what boot built but
 * keeps whatever the request resolves or binds to itself, and is thrown away afterwards. Before
 * the request the bridge points the container, the facades, the router, the HTTP kernel, the event
 * dispatcher and the view factory at the sandbox, gives it its own copy of the configuration,
 * forgets its scoped instances and the per-request services (auth, cookies queue, session store,
 * redirector) so they are built afresh; after the response it terminates the kernel (terminable
 * middleware, terminating callbacks), points everything back at the application, clears the
 * facades' resolved instances and Str's caches, flushes the sandbox, and rolls back a database
 * transaction the request left open.
 */
final class LaravelHandler
{
    /**
     * Resolved at boot, so every sandbox shares them instead of building them per request. The
     * database manager among them: its connections stay open from one request to the next, which
     * is much of what a resident worker saves (the bridge rolls back what a request left open).
     */
    public const WARM = [
        'cache', 'cache.store', 'config', 'db', 'db.factory', 'encrypter', 'events', 'files', 'hash',
        'log', 'router', 'routes', 'translator', 'view', 'view.engine.resolver',
    ];

    /**
     * Built afresh in each sandbox even when boot resolved them: they hold one request's state (the
     * session manager caches its driver, which holds the cookie jar its session cookie is queued on).
     */
    public const PER_REQUEST = [
        'auth', 'auth.driver', 'cookie', 'session', 'session.store', 'redirect', 'request',
        'Illuminate\Contracts\Auth\Access\Gate',
    ];

    /**
     * Not leaks: set afresh by every request before anything reads them (the current route and
     * request, the start time, the facades' application), caches that only fill up, and what the
     * bridge itself resets after each request.
     */
    private const LEAK_IGNORE = [
        'Illuminate\Foundation\Http\Kernel->requestStartedAt',
        'Illuminate\Routing\Router->current',
        'Illuminate\Routing\Router->currentRequest',
        'Illuminate\Routing\UrlGenerator->request',
        'Illuminate\Routing\UrlGenerator->cachedRoot',
        'Illuminate\Routing\UrlGenerator->cachedScheme',
        'Illuminate\Routing\Redirector->session',
        'Illuminate\View\Factory->shared',
        'Illuminate\Events\Dispatcher->wildcardsCache',
        'Illuminate\Routing\RouteCollection',
        'Illuminate\Support\Facades\Facade::$app',
        'Illuminate\Foundation\Bootstrap\HandleExceptions::$app',
        'Illuminate\Support\Str::$snakeCache',
        'Illuminate\Support\Str::$camelCache',
        'Illuminate\Support\Str::$studlyCache',
        'Carbon\\',
    ];

    private readonly RequestConverter $requests;
    private readonly ResponseConverter $responses;
    private readonly Gate $gate;
    private readonly ?LeakDetector $leaks;
    private readonly HttpKernelContract $kernel;
    private readonly LoggerInterface $logger;

    public function __construct(private readonly Application $app, ?BridgeOptions $options = null)
    {
        $this->kernel = $app->make(HttpKernelContract::class);
        $this->kernel->bootstrap();
        // As Request::capture() does under PHP-FPM: forms may send _method=PUT.
        IlluminateRequest::enableHttpMethodParameterOverride();
        foreach (self::WARM as $id) {
            if ($app->bound($id)) {
                $app->make($id);
            }
        }
        // What a request resolved at boot (a provider's boot() may touch the session or auth)
        // must not be the base object every sandbox shares.
        foreach (self::PER_REQUEST as $id) {
            $app->forgetInstance($id);
        }
        Facade::clearResolvedInstances();

        $options ??= BridgeOptions::fromEnvironment(
            debug: (bool) $app['config']->get('app.debug'),
            environment: (string) $app->environment(),
        );
        $this->requests = new RequestConverter($options->server);
        $this->responses = new ResponseConverter();
        $this->gate = new Gate();
        $this->logger = $options->logger();
        $this->leaks = $options->leakWarnings
            ? new LeakDetector($this->logger, [...self::LEAK_IGNORE, ...$options->leakIgnore])
            : null;
    }

    /** The usual entry file's one call: `return LaravelHandler::fromBasePath(__DIR__);`. */
    public static function fromBasePath(string $basePath, ?BridgeOptions $options = null): self
    {
        $app = require rtrim($basePath, '/') . '/bootstrap/app.php';
        if (!$app instanceof Application) {
            throw new \UnexpectedValueException("$basePath/bootstrap/app.php must return the Illuminate\\Foundation\\Application");
        }
        return new self($app, $options);
    }

    public function __invoke(Request $request): Response
    {
        $this->gate->enter();
        $sandbox = clone $this->app;
        $laravelRequest = null;
        $laravelResponse = null;
        $finished = false;
        $uploads = [];
        // Once, whoever gets there first: the handler, the end of a streamed body, or its guard.
        $finish = function () use ($sandbox, &$laravelRequest, &$laravelResponse, &$finished, &$uploads, $request): void {
            if (!$finished) {
                $finished = true;
                try {
                    $this->finish($sandbox, $request, $laravelRequest, $laravelResponse);
                } finally {
                    // As PHP does with uploads: removed once the request is over, terminate included.
                    RequestConverter::remove($uploads);
                }
            }
        };
        try {
            $this->enter($sandbox);
            $laravelRequest = IlluminateRequest::createFromBase($this->requests->convert($request, fileClass: UploadedFile::class));
            $uploads = $this->requests->takeTemporaryFiles();
            [$laravelResponse, $echoed] = ResponseConverter::capture(fn () => $this->kernel->handle($laravelRequest));
            // Laravel always has work after the response (terminable middleware, terminating
            // callbacks): in coroutine mode it runs once the body is on the wire, as under PHP-FPM.
            [$response, $streamed] = $this->responses->convert(
                $laravelResponse,
                $request->method() === 'HEAD',
                $finish,
                $echoed,
                finishAfterBody: $this->gate->guards(),
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

    private function enter(Application $sandbox): void
    {
        Container::setInstance($sandbox);
        $sandbox->instance('app', $sandbox);
        $sandbox->instance(Container::class, $sandbox);
        $sandbox->instance('config', clone $this->app['config']);
        $sandbox->forgetScopedInstances();
        foreach (self::PER_REQUEST as $id) {
            $sandbox->forgetInstance($id);
        }
        Facade::clearResolvedInstances();
        Facade::setFacadeApplication($sandbox);
        $this->pointAt($sandbox);
    }

    private function finish(Application $sandbox, Request $request, ?IlluminateRequest $laravelRequest, ?SymfonyResponse $laravelResponse): void
    {
        try {
            if ($laravelRequest !== null && $laravelResponse !== null) {
                $this->kernel->terminate($laravelRequest, $laravelResponse);
            }
        } finally {
            try {
                $this->pointAt($this->app);
                Container::setInstance($this->app);
                Facade::clearResolvedInstances();
                Facade::setFacadeApplication($this->app);
                if (method_exists(Str::class, 'flushCache')) {
                    Str::flushCache();
                }
                $sandbox->flush();
                $this->closeTransactions($request);
                $this->leaks?->check($request->method() . ' ' . $request->path(), $this->instances());
            } finally {
                $this->gate->leave();
            }
        }
    }

    /**
     * A transaction a request left open (an exception between beginTransaction() and commit()
     * that nothing caught) would otherwise swallow the next requests' writes on that connection.
     */
    private function closeTransactions(Request $request): void
    {
        if (!$this->app->resolved('db')) {
            return;
        }
        foreach ($this->app['db']->getConnections() as $name => $connection) {
            if ($connection->transactionLevel() > 0) {
                $connection->rollBack(0);
                $this->logger->warning(sprintf(
                    '%s %s left a transaction open on the "%s" database connection; it was rolled back',
                    $request->method(),
                    $request->path(),
                    $name,
                ));
            }
            $connection->flushQueryLog();
        }
    }

    /** The shared objects that keep a reference to "the" application. */
    private function pointAt(Application $app): void
    {
        if (method_exists($this->kernel, 'setApplication')) {
            $this->kernel->setApplication($app);
        }
        if ($this->app->resolved('router')) {
            $this->app['router']->setContainer($app);
        }
        if ($this->app->resolved('view')) {
            $this->app['view']->setContainer($app);
        }
        if ($this->app->resolved('events')) {
            $events = $this->app['events'];
            // The dispatcher resolves class listeners through its container but has no setter.
            (function () use ($app): void {
                $this->container = $app;
            })->call($events);
        }
    }

    /** @return array<string, object> the base application's shared instances, for the leak check */
    private function instances(): array
    {
        $instances = (new \ReflectionProperty(Container::class, 'instances'))->getValue($this->app);
        $objects = [];
        foreach ($instances as $id => $instance) {
            if (\is_object($instance) && $instance !== $this->app && $id !== 'config') {
                $objects[(string) $id] = $instance;
            }
        }
        return $objects;
    }
}
