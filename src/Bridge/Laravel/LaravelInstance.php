<?php

declare(strict_types=1);

namespace Weft\Bridge\Laravel;

use Illuminate\Container\Container;
use Illuminate\Contracts\Debug\ExceptionHandler;
use Illuminate\Contracts\Http\Kernel as HttpKernelContract;
use Illuminate\Foundation\Application;
use Illuminate\Foundation\Exceptions\Handler;
use Illuminate\Support\Facades\Facade;
use Illuminate\Support\Str;
use Psr\Log\LoggerInterface;
use Weft\Bridge\HttpFoundation\PhpGlobals;
use Weft\Hook\BlockingDetector;
use Weft\Http\Message\Request;

/**
 * One booted Laravel application of a worker's pool, serving one request at a time: the request runs
 * in a sandbox (a clone of the application) that the instance's shared services point at while it
 * runs, and everything the request may have changed on them is put back afterwards.
 *
 * @internal
 */
final class LaravelInstance
{
    public readonly HttpKernelContract $kernel;
    public readonly PhpGlobals $globals;

    /** @var array{string, string|array<string>}|null the translator's locale and fallback after boot */
    private readonly ?array $locale;

    /** @var array<string, mixed>|null the view factory's shared data after boot */
    private readonly ?array $viewShared;

    /** The auth manager's user resolver after boot (Auth::shouldUse() in a request replaces it). */
    private readonly ?\Closure $userResolver;

    /** @var array{array<class-string, mixed>, array<class-string, bool>}|null Eloquent's global scopes and booted models when the request began */
    private ?array $models = null;

    public function __construct(public readonly Application $app)
    {
        $this->kernel = $app->make(HttpKernelContract::class);
        $this->kernel->bootstrap();
        self::measureErrorPagesApart($app);
        foreach (LaravelHandler::WARM as $id) {
            if ($app->bound($id)) {
                $app->make($id);
            }
        }
        // What a request resolved at boot (a provider's boot() may touch the session or auth)
        // must not be the base object every sandbox shares.
        foreach (LaravelHandler::PER_REQUEST as $id) {
            $app->forgetInstance($id);
        }
        Facade::clearResolvedInstances();
        // What a request may change on these shared services is put back after it (resetShared()).
        $this->locale = $app->resolved('translator') && method_exists($app['translator'], 'getFallback')
            ? [$app['translator']->getLocale(), $app['translator']->getFallback()]
            : null;
        $this->viewShared = $app->resolved('view') ? $app['view']->getShared() : null;
        $this->userResolver = $app->resolved('auth') && method_exists($app['auth'], 'userResolver') ? $app['auth']->userResolver() : null;
        $this->globals = new PhpGlobals();
    }

    /**
     * An error page is the framework's work (the blocking-call detector does not report a hold caught
     * while Laravel renders one: BlockingDetector::ERROR_RENDERING), and the held time starts again
     * once it is rendered, so the middleware the response then goes back through is not blamed for
     * it: a cold worker's first debug page took ~80 ms and was reported at the cookie encryption after
     * it. The exception handler is wrapped whenever it is resolved (in the application or a request's
     * sandbox, which keeps its callbacks), not resolved here: it stays built where Laravel builds it.
     * The application's own respondUsing() callback, if any, runs after the boundary.
     */
    private static function measureErrorPagesApart(Application $app): void
    {
        $wrap = static function (mixed $handler): void {
            static $wrapped = null;
            $wrapped ??= new \WeakMap();
            if (!$handler instanceof Handler || !\method_exists($handler, 'respondUsing') || isset($wrapped[$handler])) {
                return;
            }
            $wrapped[$handler] = true;
            $previous = (fn (): mixed => $this->finalizeResponseCallback ?? null)->call($handler);
            $handler->respondUsing(static function (mixed $response, \Throwable $e, mixed $request) use ($previous): mixed {
                BlockingDetector::boundary();
                return $previous !== null ? $previous($response, $e, $request) : $response;
            });
        };
        $app->afterResolving(ExceptionHandler::class, $wrap);
        if ($app->resolved(ExceptionHandler::class)) {
            $wrap($app->make(ExceptionHandler::class));
        }
    }

    /** Points the container, the facades and the shared services at the request's sandbox. */
    public function enter(Application $sandbox): void
    {
        Container::setInstance($sandbox);
        $sandbox->instance('app', $sandbox);
        $sandbox->instance(Container::class, $sandbox);
        $sandbox->instance('config', clone $this->app['config']);
        $sandbox->forgetScopedInstances();
        foreach (LaravelHandler::PER_REQUEST as $id) {
            $sandbox->forgetInstance($id);
        }
        Facade::clearResolvedInstances();
        Facade::setFacadeApplication($sandbox);
        $this->pointAt($sandbox);
        $this->forgetRequestState();
        $this->models = self::eloquent();
    }

    /** Points everything back at the instance's application and forgets what the request left. */
    public function leave(Application $sandbox, Request $request, LoggerInterface $logger): void
    {
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
        $this->closeTransactions($request, $logger);
        $this->forgetRequestState();
        $this->restoreGlobalScopes();
    }

    /** @return array{array<class-string, mixed>, array<class-string, bool>}|null */
    private static function eloquent(): ?array
    {
        if (!class_exists(\Illuminate\Database\Eloquent\Model::class, false)) {
            return null;
        }
        return (static fn (): array => [static::$globalScopes, static::$booted])
            ->bindTo(null, \Illuminate\Database\Eloquent\Model::class)();
    }

    /**
     * A global scope a request added (Model::addGlobalScope() with one tenant's id) is gone after it,
     * as under PHP-FPM; the scopes of models that booted during the request stay with them.
     */
    private function restoreGlobalScopes(): void
    {
        $before = $this->models;
        $this->models = null;
        if ($before === null) {
            return;
        }
        [$scopes, $booted] = $before;
        (static function () use ($scopes, $booted): void {
            foreach (static::$globalScopes as $class => $classScopes) {
                if (!isset($booted[$class])) {
                    $scopes[$class] = $classScopes;
                }
            }
            static::$globalScopes = $scopes;
        })->bindTo(null, \Illuminate\Database\Eloquent\Model::class)();
    }

    /** @return array<string, object> the application's shared instances, for the leak check */
    public function instances(): array
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

    /**
     * What Laravel keeps of one request on services every request of this instance shares, and resets
     * itself between two requests of a long-running worker (under Octane, on its request events):
     * - the debug error page's query list (Foundation\Exceptions\Renderer\Listener), which would
     *   otherwise show one request's queries, other users' included, on the next one's error page;
     * - each connection's total query time and its fired DB::whenQueryingForLongerThan() handlers,
     *   which would otherwise add up over the worker's life and fire once, on the wrong request;
     * - DB::preventQueries() / allowQueries() state a request may have set.
     */
    private function forgetRequestState(): void
    {
        $listener = 'Illuminate\Foundation\Exceptions\Renderer\Listener';
        if ($this->app->resolved($listener)) {
            $renderer = $this->app->make($listener);
            (function (): void {
                $this->queries = [];
            })->call($renderer);
        }
        if (!$this->app->resolved('db')) {
            return;
        }
        foreach ($this->app['db']->getConnections() as $connection) {
            if (method_exists($connection, 'resetTotalQueryDuration')) {
                $connection->resetTotalQueryDuration();
            }
            if (method_exists($connection, 'allowQueryDurationHandlersToRunAgain')) {
                $connection->allowQueryDurationHandlersToRunAgain();
            }
            if (method_exists($connection, 'allowQueries')) {
                $connection->allowQueries();
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
    private function closeTransactions(Request $request, LoggerInterface $logger): void
    {
        if (!$this->app->resolved('db')) {
            return;
        }
        foreach ($this->app['db']->getConnections() as $name => $connection) {
            if ($connection->transactionLevel() > 0) {
                $connection->rollBack(0);
                $logger->warning(sprintf(
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
        foreach (LaravelHandler::MANAGERS as $id) {
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
}
