<?php

declare(strict_types=1);

namespace Weft\Bridge\Laravel;

use Illuminate\Container\Container;
use Illuminate\Foundation\Application;
use Illuminate\Http\Request as IlluminateRequest;
use Illuminate\Http\UploadedFile;
use Illuminate\Pagination\PaginationState;
use Psr\Log\LoggerInterface;
use Symfony\Component\HttpFoundation\Response as SymfonyResponse;
use Weft\Bridge\BridgeOptions;
use Weft\Bridge\Instance;
use Weft\Bridge\InstancePool;
use Weft\Bridge\HttpFoundation\RequestConverter;
use Weft\Bridge\HttpFoundation\ResponseConverter;
use Weft\Bridge\HttpFoundation\PhpGlobals;
use Weft\Bridge\LeakDetector;
use Weft\Coroutine\StateSet;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;

/**
 * A Laravel application as a Weft handler.
 *
 * A worker holds a pool of applications (BridgeOptions::$instances, `--app-instances`), each created
 * and bootstrapped once (environment, configuration, service providers registered and booted, the
 * services every request uses resolved), and each serving one request at a time: a request takes
 * one for its whole life, streamed body and terminating work included, and gives it back; when all
 * are busy it waits its turn. With several, requests that wait on the database or an upstream no
 * longer hold the worker; what Laravel keeps process-wide (FollowedState) follows the coroutine, so
 * each request sees its own application's.
 *
 * Each request runs in a sandbox: a clone of its application, which shares what boot built but
 * keeps whatever the request resolves or binds to itself, and is thrown away afterwards
 * (LaravelInstance: what is pointed at the sandbox, and what is put back after the response).
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
    public const MANAGERS = ['auth', 'session', 'Illuminate\Contracts\Auth\Access\Gate'];

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
    /** @var InstancePool<LaravelInstance> */
    private readonly InstancePool $pool;
    private readonly ?LeakDetector $leaks;
    private readonly LoggerInterface $logger;

    /**
     * @param Application $app the first application, not yet bootstrapped
     * @param null|\Closure(): Application $factory makes a further application (what bootstrap/app.php
     *        returns) when the pool grows; without one the pool holds $app alone
     */
    public function __construct(Application $app, ?BridgeOptions $options = null, ?\Closure $factory = null)
    {
        self::declareWebWorker();
        // As Request::capture() does under PHP-FPM: forms may send _method=PUT.
        IlluminateRequest::enableHttpMethodParameterOverride();
        FollowedState::register();
        PhpGlobals::follow();
        // The values before the first application booted ($app exists: the container's current
        // instance is already it), from which every further instance boots.
        $pristine = StateSet::capture();
        $first = $app;
        $boot = static function () use (&$first, $factory): LaravelInstance {
            $app = $first ?? $factory();
            $first = null;
            if (!$app instanceof Application) {
                throw new \UnexpectedValueException('The application factory must return an Illuminate\\Foundation\\Application, got ' . get_debug_type($app));
            }
            $instance = new LaravelInstance($app);
            self::resolvePaginationThroughTheCurrentApplication();
            return $instance;
        };
        $size = $factory === null ? 1 : ($options?->instances ?? BridgeOptions::instancesWanted());
        $this->pool = new InstancePool($boot, $size, $pristine);
        self::silenceShutdownRendering();
        $this->pool->warm();
        // The configuration is loaded now.
        $options ??= BridgeOptions::fromEnvironment(
            debug: (bool) $app['config']->get('app.debug'),
            environment: (string) $app->environment(),
        );
        $this->requests = new RequestConverter($options->server);
        $this->responses = new ResponseConverter();
        $this->logger = $options->logger();
        if ($factory === null && BridgeOptions::instancesWanted() > 1) {
            $this->logger->notice('LaravelHandler was given one application: it serves one request at a time. LaravelHandler::fromBasePath() makes one per --app-instances');
        }
        $this->leaks = $options->leakWarnings
            ? new LeakDetector($this->logger, [...self::LEAK_IGNORE, ...$options->leakIgnore])
            : null;
    }

    /** The usual entry file's one call: `return LaravelHandler::fromBasePath(__DIR__);`. */
    public static function fromBasePath(string $basePath, ?BridgeOptions $options = null): self
    {
        self::declareWebWorker();
        $make = static function () use ($basePath): Application {
            $app = require rtrim($basePath, '/') . '/bootstrap/app.php';
            if (!$app instanceof Application) {
                throw new \UnexpectedValueException("$basePath/bootstrap/app.php must return the Illuminate\\Foundation\\Application");
            }
            return $app;
        };
        return new self($make(), $options, $make);
    }

    /** Instances booted so far in this worker (at most the pool's size). */
    public function instances(): int
    {
        return $this->pool->booted();
    }

    /**
     * The paginator's resolvers (current page, path, query string) read the request from the
     * application they were given at boot, which has none: paginate() would fail with "Target class
     * [request] does not exist". Bound once to whichever application is current (the request's
     * sandbox while it runs), after each boot (which sets them again).
     */
    private static function resolvePaginationThroughTheCurrentApplication(): void
    {
        if (!class_exists(PaginationState::class)) {
            return;
        }
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

    /**
     * Laravel's shutdown function renders a fatal error as an HTTP page through the application it
     * booted with, which has no request: in a worker that adds a second fatal ("Target class
     * [request] does not exist", ~28 lines) to the log after the first. Weft answers and logs the
     * fatal itself; registered after every instance's, this one runs first and turns theirs off
     * (HandleExceptions forwards nothing once it has no application).
     */
    private static function silenceShutdownRendering(): void
    {
        static $registered = false;
        if ($registered || !class_exists(\Illuminate\Foundation\Bootstrap\HandleExceptions::class)) {
            return;
        }
        $registered = true;
        register_shutdown_function(static function (): void {
            \Illuminate\Foundation\Bootstrap\HandleExceptions::forgetApp();
        });
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
        $instance = $this->pool->acquire();
        $leakToken = $this->leaks?->begin();
        /** @var LaravelInstance $laravel */
        $laravel = $instance->framework;
        $sandbox = clone $laravel->app;
        $laravelRequest = null;
        $laravelResponse = null;
        $finished = false;
        $uploads = [];
        $globals = 0;
        // Once, whoever gets there first: the handler, the end of a streamed body (in the connection's
        // writer: it runs with this instance's state in place), or its guard.
        $finish = function () use ($leakToken, $instance, $laravel, $sandbox, &$laravelRequest, &$laravelResponse, &$finished, &$uploads, &$globals, $request): void {
            if (!$finished) {
                $finished = true;
                $instance->run(function () use ($leakToken, $instance, $laravel, $sandbox, $laravelRequest, $laravelResponse, &$uploads, &$globals, $request): void {
                    try {
                        $this->finish($leakToken, $instance, $laravel, $sandbox, $request, $laravelRequest, $laravelResponse);
                    } finally {
                        // As PHP does with uploads: removed once the request is over, terminate included.
                        RequestConverter::remove($uploads);
                        $laravel->globals->leave($globals);
                    }
                });
            }
        };
        return $this->responses->answer(function () use ($laravel, $sandbox, $request, &$uploads, &$globals, &$laravelRequest, &$laravelResponse): array {
            $laravel->enter($sandbox);
            $converted = $this->requests->convert($request, fileClass: UploadedFile::class);
            $uploads = $this->requests->takeTemporaryFiles();
            // Before createFromBase(), which moves a JSON body's fields into the request bag: PHP's
            // $_POST has only form fields.
            $globals = $laravel->globals->enter($converted);
            $laravelRequest = IlluminateRequest::createFromBase($converted);
            [$laravelResponse, $echoed] = ResponseConverter::capture(fn () => $laravel->kernel->handle($laravelRequest));
            // Laravel always has work after the response (terminable middleware, terminating
            // callbacks): it runs once the body is on the wire, as under PHP-FPM.
            return [$laravelResponse, $echoed, \Weft\current() !== null];
        }, $request->method() === 'HEAD', $finish, $instance->run(...));
    }

    /** @param Instance<LaravelInstance> $instance */
    private function finish(?int $leakToken, Instance $instance, LaravelInstance $laravel, Application $sandbox, Request $request, ?IlluminateRequest $laravelRequest, ?SymfonyResponse $laravelResponse): void
    {
        try {
            if ($laravelRequest !== null && $laravelResponse !== null) {
                try {
                    $laravel->kernel->terminate($laravelRequest, $laravelResponse);
                } catch (\Throwable $e) {
                    // The response stands (under PHP-FPM it has left by now): the failure is logged.
                    $this->logger->error('{request}: the terminating work failed after the response: {message}', [
                        'request' => $request->method() . ' ' . $request->target(), 'message' => $e->getMessage(), 'exception' => $e,
                    ]);
                }
            }
        } finally {
            try {
                $laravel->leave($sandbox, $request, $this->logger);
                $this->leaks?->check($request->method() . ' ' . $request->path(), $laravel->instances(), $leakToken, $instance->number);
            } finally {
                $this->pool->release($instance);
            }
        }
    }
}
