<?php

declare(strict_types=1);

namespace Weft\Bridge\Laravel;

use Illuminate\Container\Container;
use Illuminate\Contracts\Http\Kernel as HttpKernelContract;
use Illuminate\Foundation\Application;
use Illuminate\Http\Request as IlluminateRequest;
use Illuminate\Http\UploadedFile;
use Illuminate\Pagination\PaginationState;
use Illuminate\Support\Facades\Facade;
use Illuminate\Support\Str;
use Psr\Log\LoggerInterface;
use Symfony\Component\HttpFoundation\Response as SymfonyResponse;
use Weft\Bridge\BridgeOptions;
use Weft\Bridge\Gate;
use Weft\Bridge\HttpFoundation\RequestConverter;
use Weft\Bridge\HttpFoundation\ResponseConverter;
use Weft\Bridge\HttpFoundation\PhpGlobals;
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
        'auth', 'cache', 'cache.store', 'config', 'db', 'db.factory', 'encrypter', 'events', 'files', 'hash',
        'log', 'router', 'routes', 'session', 'translator', 'view', 'view.engine.resolver',
    ];

    /**
     * Built afresh in each sandbox even when boot resolved them: they hold one request's state (the
     * guard and its user, the session store, which holds the cookie jar its cookie is queued on).
     */
    public const PER_REQUEST = [
        'auth.driver', 'cookie', 'session.store', 'redirect', 'request',
    ];

    /**
     * Built at boot and kept, because the application configures them there (Auth::extend(),
     * Auth::viaRequest(), Auth::provider(), Session::extend(), Gate::define() and policies in a
     * provider's boot()), but pointed at the sandbox during a request, with what they cache of one
     * request (the auth guards and their user, the session stores) forgotten before and after it.
     */
    private const MANAGERS = ['auth', 'session', 'Illuminate\Contracts\Auth\Access\Gate'];

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
    private readonly PhpGlobals $globals;
    private readonly ?LeakDetector $leaks;
    private readonly HttpKernelContract $kernel;
    private readonly LoggerInterface $logger;

    /** @var array{string, string|array<string>}|null the translator's locale and fallback after boot */
    private readonly ?array $locale;

    /** @var array<string, mixed>|null the view factory's shared data after boot */
    private readonly ?array $viewShared;

    /** The auth manager's user resolver after boot (Auth::shouldUse() in a request replaces it). */
    private readonly ?\Closure $userResolver;

    public function __construct(private readonly Application $app, ?BridgeOptions $options = null)
    {
        self::declareWebWorker();
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
        // The paginator's resolvers (current page, path, query string) read the request from the
        // application they were given at boot, which has none: paginate() would fail with "Target
        // class [request] does not exist". Bound once to whichever application is current (the
        // request's sandbox while it runs).
        if (class_exists(PaginationState::class)) {
            PaginationState::resolveUsing(new class () implements \ArrayAccess {
                public function offsetExists(mixed $offset): bool
                {
                    return isset(Container::getInstance()[$offset]);
                }

                public function offsetGet(mixed $offset): mixed
                {
                    return Container::getInstance()[$offset];
                }

                public function offsetSet(mixed $offset, mixed $value): void
                {
                    Container::getInstance()[$offset] = $value;
                }

                public function offsetUnset(mixed $offset): void
                {
                    unset(Container::getInstance()[$offset]);
                }
            });
        }
        // What a request may change on these shared services is put back after it (resetShared()).
        $this->locale = $app->resolved('translator') && method_exists($app['translator'], 'getFallback')
            ? [$app['translator']->getLocale(), $app['translator']->getFallback()]
            : null;
        $this->viewShared = $app->resolved('view') ? $app['view']->getShared() : null;
        $this->userResolver = $app->resolved('auth') && method_exists($app['auth'], 'userResolver') ? $app['auth']->userResolver() : null;

        $options ??= BridgeOptions::fromEnvironment(
            debug: (bool) $app['config']->get('app.debug'),
            environment: (string) $app->environment(),
        );
        $this->requests = new RequestConverter($options->server);
        $this->responses = new ResponseConverter();
        $this->gate = new Gate();
        $this->globals = new PhpGlobals();
        $this->logger = $options->logger();
        $this->leaks = $options->leakWarnings
            ? new LeakDetector($this->logger, [...self::LEAK_IGNORE, ...$options->leakIgnore])
            : null;
    }

    /** The usual entry file's one call: `return LaravelHandler::fromBasePath(__DIR__);`. */
    public static function fromBasePath(string $basePath, ?BridgeOptions $options = null): self
    {
        self::declareWebWorker();
        $app = require rtrim($basePath, '/') . '/bootstrap/app.php';
        if (!$app instanceof Application) {
            throw new \UnexpectedValueException("$basePath/bootstrap/app.php must return the Illuminate\\Foundation\\Application");
        }
        return new self($app, $options);
    }

    /**
     * Tells Laravel it serves the web, as Octane does: runningInConsole() would otherwise say true
     * under the CLI SAPI, and the application would boot its console side in every worker (commands
     * registered, the --env option of the worker's own argv read, an uncaught error rendered for a
     * terminal). And dump() and dd() write HTML into the response, as under PHP-FPM, instead of
     * terminal text on the worker's stdout (Laravel picks the dumper by SAPI). Each is left alone
     * when the application sets APP_RUNNING_IN_CONSOLE or VAR_DUMPER_FORMAT itself.
     */
    private static function declareWebWorker(): void
    {
        if (!\in_array(\PHP_SAPI, ['cli', 'phpdbg', 'embed'], true)) {
            return;
        }
        foreach (['APP_RUNNING_IN_CONSOLE' => 'false', 'VAR_DUMPER_FORMAT' => 'html'] as $name => $value) {
            if (!isset($_SERVER[$name]) && !isset($_ENV[$name]) && getenv($name) === false) {
                $_SERVER[$name] = $_ENV[$name] = $value;
            }
        }
    }

    public function __invoke(Request $request): Response
    {
        $this->gate->enter();
        $sandbox = clone $this->app;
        $laravelRequest = null;
        $laravelResponse = null;
        $finished = false;
        $uploads = [];
        $globals = 0;
        // Once, whoever gets there first: the handler, the end of a streamed body, or its guard.
        $finish = function () use ($sandbox, &$laravelRequest, &$laravelResponse, &$finished, &$uploads, &$globals, $request): void {
            if (!$finished) {
                $finished = true;
                try {
                    $this->finish($sandbox, $request, $laravelRequest, $laravelResponse);
                } finally {
                    // As PHP does with uploads: removed once the request is over, terminate included.
                    RequestConverter::remove($uploads);
                    $this->globals->leave($globals);
                }
            }
        };
        try {
            $this->enter($sandbox);
            $converted = $this->requests->convert($request, fileClass: UploadedFile::class);
            $uploads = $this->requests->takeTemporaryFiles();
            // Before createFromBase(), which moves a JSON body's fields into the request bag: PHP's
            // $_POST has only form fields.
            $globals = $this->globals->enter($converted);
            $laravelRequest = IlluminateRequest::createFromBase($converted);
            [$laravelResponse, $echoed] = ResponseConverter::capture(fn () => $this->kernel->handle($laravelRequest));
            // Laravel always has work after the response (terminable middleware, terminating
            // callbacks): it runs once the body is on the wire, as under PHP-FPM.
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
                try {
                    $this->kernel->terminate($laravelRequest, $laravelResponse);
                } catch (\Throwable $e) {
                    // The response stands (under PHP-FPM it has left by now): the failure is logged.
                    $this->logger->error('{request}: the terminating work failed after the response: {message}', [
                        'request' => $request->method() . ' ' . $request->target(), 'message' => $e->getMessage(), 'exception' => $e,
                    ]);
                }
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
                // once() memoizes for the request under PHP-FPM; in a static method its value
                // would otherwise be the next visitor's too.
                if (class_exists(\Illuminate\Support\Once::class)) {
                    \Illuminate\Support\Once::flush();
                }
                $sandbox->flush();
                $this->resetShared();
                $this->closeTransactions($request);
                $this->leaks?->check($request->method() . ' ' . $request->path(), $this->instances());
            } finally {
                $this->gate->leave();
            }
        }
    }

    /**
     * The services built at boot that every request shares, put back as boot left them where a
     * request may have changed them through ordinary calls: the locale (App::setLocale() sets the
     * shared translator's, and Carbon's), data shared with every view (View::share()), the log's
     * context (Log::withContext(), Log::shareContext()) and the array cache stores, which under
     * PHP-FPM live for one request.
     */
    private function resetShared(): void
    {
        $app = $this->app;
        if ($this->locale !== null) {
            [$locale, $fallback] = $this->locale;
            $translator = $app['translator'];
            if ($translator->getLocale() !== $locale) {
                $translator->setLocale($locale);
            }
            $translator->setFallback($fallback);
            if (class_exists(\Carbon\Carbon::class) && \Carbon\Carbon::getLocale() !== $locale) {
                \Carbon\Carbon::setLocale($locale);
            }
        }
        if ($this->userResolver !== null) {
            $app['auth']->resolveUsersUsing($this->userResolver);
        }
        if ($this->viewShared !== null) {
            $view = $app['view'];
            $shared = $this->viewShared;
            (function () use ($shared): void {
                $this->shared = $shared;
            })->call($view);
        }
        if ($app->resolved('log')) {
            $log = $app['log'];
            if (method_exists($log, 'flushSharedContext')) {
                $log->flushSharedContext();
            }
            if (method_exists($log, 'getChannels')) {
                foreach ($log->getChannels() as $channel) {
                    if (\is_object($channel) && method_exists($channel, 'withoutContext')) {
                        $channel->withoutContext();
                    }
                }
            }
        }
        if ($app->resolved('cache')) {
            $cache = $app['cache'];
            $stores = (fn (): array => $this->stores ?? [])->call($cache);
            foreach ($stores as $repository) {
                if (\is_object($repository) && method_exists($repository, 'getStore') && $repository->getStore() instanceof \Illuminate\Cache\ArrayStore) {
                    $repository->getStore()->flush();
                }
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
            if (method_exists($connection, 'forgetRecordModificationState')) {
                // A write made reads "sticky" to the write connection for the rest of its request only.
                $connection->forgetRecordModificationState();
            }
        }
    }

    /** The shared objects that keep a reference to "the" application. */
    private function pointAt(Application $app): void
    {
        foreach (self::MANAGERS as $id) {
            if (!$this->app->resolved($id)) {
                continue;
            }
            $manager = $this->app->make($id);
            if (method_exists($manager, 'forgetGuards')) {
                $manager->forgetGuards();
            }
            if (method_exists($manager, 'forgetDrivers')) {
                $manager->forgetDrivers();
            }
            if (method_exists($manager, 'setApplication')) {
                $manager->setApplication($app);
            } elseif (method_exists($manager, 'setContainer')) {
                $manager->setContainer($app);
            }
        }
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
