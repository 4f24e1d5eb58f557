<?php

declare(strict_types=1);

namespace Weft\Bridge;

use Psr\Log\LoggerInterface;
use Weft\Coroutine\ProcessState;

/**
 * Finds state that one request leaves behind for the next: static properties of loaded classes and
 * properties of the shared services a framework keeps between requests.
 *
 * After each request (once the bridge has reset what the framework resets) it takes a shallow
 * fingerprint of every such property: scalars by value, arrays by their contents two levels deep,
 * collections by their size, other objects by identity. A property whose fingerprint differs from the one taken after the previous
 * request was changed by this request and survived the reset: the next request on this worker sees
 * it. Each property is reported once per worker, naming the class, the property and the request
 * that changed it. The first request down each path (method and path) only warms up: that is when
 * frameworks fill their lazy caches, so its changes are taken as the new baseline, unreported.
 *
 * When a worker serves several requests at once (a pool of framework instances), each instance's
 * services are compared with what the same instance had after its own previous request, and statics
 * that follow the coroutine (ProcessState) are each instance's own and left out. What stays shared is
 * a race between users: a static property that changes while another request is in flight in the
 * same worker (begin() to check()) is reported as such, naming the class and property.
 *
 * Shallow on purpose: objects are followed two levels below each service (a framework inlines the
 * private services it builds into their users), arrays two levels deep, so a change deeper in an
 * object graph is missed; but the check stays cheap enough to leave on in development, and the
 * common leaks (a static cache or registry, a service's array or counter, a replaced collaborator)
 * are within that.
 */
final class LeakDetector
{
    /**
     * Framework state that changes without leaking: properties every request overwrites before it
     * reads them (the routing context, a kernel's start time) and caches filled lazily. An entry is a
     * class (and its subclasses), a namespace prefix ending in a backslash, or one property:
     * "Class->property" or "Class::$static".
     */
    public const DEFAULT_IGNORE = [
        // Listeners are resolved and sorted lazily, on the first dispatch of each event.
        'Symfony\Component\EventDispatcher\EventDispatcher->listeners',
        'Symfony\Component\EventDispatcher\EventDispatcher->optimized',
        'Symfony\Component\EventDispatcher\EventDispatcher->sorted',
        // DebugHandlersListener installs the exception handler afresh on every request.
        'Symfony\Component\ErrorHandler\ErrorHandler->exceptionHandler',
        // Caches of the error pages' dumper.
        'Symfony\Component\VarDumper\\',
        // A native session's handler and metadata bag are shared by every request's session
        // storage; each session read and start sets them afresh for its own session id.
        'Symfony\Component\HttpFoundation\Session\Storage\Handler\AbstractSessionHandler',
        'Symfony\Component\HttpFoundation\Session\Storage\MetadataBag',
        // A weak reference to the last exception of kernel.terminate, to recognize it if it comes back.
        'Symfony\Component\HttpKernel\HttpKernel->terminateException',
        'Symfony\Component\Routing\RequestContext',
        'Symfony\Component\HttpKernel\Kernel',
        'Symfony\Component\HttpFoundation\Request',
        'Composer\\',
        // Laravel's views and translations, filled lazily: the first error page on a path that has
        // worked so far resolves the error views (their namespace hint, paths, engine, compiled
        // state) and loads the translations it prints. Component rendering leaves the last
        // component's slots and data behind, which the next one sets afresh before reading.
        'Illuminate\View\FileViewFinder->views',
        'Illuminate\View\FileViewFinder->hints',
        'Illuminate\View\Factory->pathEngineCache',
        'Illuminate\View\Factory->normalizedNameCache',
        'Illuminate\View\Factory->slots',
        'Illuminate\View\Factory->componentData',
        'Illuminate\View\Factory::$parentPlaceholder',
        'Illuminate\View\Factory::$parentPlaceholderSalt',
        'Illuminate\View\Component::$bladeViewCache',
        'Illuminate\View\Component::$propertyCache',
        'Illuminate\View\Component::$methodCache',
        'Illuminate\View\Component::$constructorParametersCache',
        'Illuminate\View\Component::$ignoredParameterNames',
        'Illuminate\View\Engines\EngineResolver->resolved',
        'Illuminate\View\Engines\CompilerEngine->compiledOrNotExpired',
        'Illuminate\Translation\Translator->parsed',
        'Illuminate\Translation\Translator->loaded',
        // Weft's own machinery (its loop, schedulers, pools) changes with every request by design.
        'Weft\\Loop\\', 'Weft\\Coroutine\\', 'Weft\\Socket\\', 'Weft\\Server\\', 'Weft\\Http\\',
        'Weft\\Client\\', 'Weft\\Pool\\', 'Weft\\Mode\\', 'Weft\\Cli\\', 'Weft\\Bridge\\',
        'PHPUnit\\',
    ];

    private const ARRAY_DEPTH = 2;
    /** How far below a service its objects are followed: a service's collaborator and theirs. */
    private const OBJECT_DEPTH = 2;
    /** Paths remembered as warmed up; past this many every request is checked. */
    private const WARM_PATHS = 10_000;
    private const ARRAY_LIMIT = 256;

    /** @var list<array{string, \ReflectionProperty}> label and property of every static of the user classes */
    private array $statics = [];
    private int $scanned = 0;
    /** @var array<int|string, array<string, string>> by instance: property label => fingerprint after its previous request */
    private array $previous = [];
    /** @var array<int, array{array<string, string>, bool}> requests in flight: statics when they began, whether another overlapped */
    private array $inFlight = [];
    private int $nextToken = 1;
    /** @var array<string, true> statics already reported as raced */
    private array $raced = [];
    /** @var array<string, true> */
    private array $reported = [];
    /** @var array<string, true> requests ("GET /path") seen at least once */
    private array $warm = [];
    /** @var list<string> */
    private readonly array $ignore;
    /** @var array<string, bool> */
    private array $ignoredClasses = [];
    /** @var array<string, true> "Class->name" (also used for statics: "Class::$name" is stored so) */
    private array $ignoredProperties = [];
    /** @var array<string, list<string>> a class and its parents */
    private array $lineage = [];

    /** @param list<string> $ignore class names or namespace prefixes (ending in "\") never reported */
    public function __construct(private readonly LoggerInterface $logger, array $ignore = [])
    {
        $classes = [];
        foreach ([...self::DEFAULT_IGNORE, ...$ignore] as $entry) {
            if (str_contains($entry, '->')) {
                $this->ignoredProperties[$entry] = true;
            } elseif (str_contains($entry, '::$')) {
                $this->ignoredProperties[str_replace('::$', '->', $entry)] = true;
            } else {
                $classes[] = $entry;
            }
        }
        $this->ignore = $classes;
    }

    /**
     * Marks a request as in flight (before it enters the framework), for the concurrent check.
     *
     * @return int the token to give check()
     */
    public function begin(): int
    {
        $statics = [];
        $this->staticFingerprints($statics);
        foreach ($this->inFlight as $token => [$before]) {
            $this->inFlight[$token][1] = true;
        }
        $token = $this->nextToken++;
        $this->inFlight[$token] = [$statics, $this->inFlight !== []];
        return $token;
    }

    /**
     * @param string $request the request's method and path ("GET /cart"), for warm-up and the message
     * @param iterable<string, object> $services the framework's shared services by id
     * @param int|null $token what begin() gave this request, if it was called
     * @param int|string $instance which framework instance served it (its services are compared with its own)
     * @return list<string> the properties reported now (already reported ones are not repeated)
     */
    public function check(string $request, iterable $services, ?int $token = null, int|string $instance = 0): array
    {
        $current = [];
        $this->staticFingerprints($current);
        [$began, $overlapped] = $token !== null && isset($this->inFlight[$token]) ? $this->inFlight[$token] : [null, false];
        unset($this->inFlight[$token]);
        // Every service is labelled as itself, also where another one holds it; the objects they
        // hold that are no service (a framework inlines private ones) are labelled by the path to them.
        $seen = [];
        foreach ($services as $service) {
            $seen[spl_object_id($service)] = true;
        }
        foreach ($services as $id => $service) {
            $class = $service::class;
            $this->objectFingerprints($current, $service, $id === $class ? $class : "$class (service \"$id\")", '', self::OBJECT_DEPTH, $seen);
        }
        $previous = $this->previous[$instance] ?? null;
        $this->previous[$instance] = $current;
        // The first request down a path fills that path's lazy caches (compiled routes, loaded
        // translations, resolved view engines): only its later requests can tell a leak.
        $warmingUp = !isset($this->warm[$request]);
        if ($warmingUp && \count($this->warm) < self::WARM_PATHS) {
            $this->warm[$request] = true;
        }
        if ($warmingUp) {
            return [];
        }
        $raced = $overlapped && $began !== null ? $this->races($request, $began, $current) : [];
        if ($previous === null) {
            return $raced;
        }

        $changed = [];
        foreach ($current as $label => $print) {
            if (isset($previous[$label]) && $previous[$label] !== $print && !isset($this->reported[$label])) {
                $this->reported[$label] = true;
                $changed[] = $label;
            }
        }
        if ($changed !== []) {
            $this->logger->warning(sprintf(
                'state leak: %s changed %s, and the next request on this worker will see it (reset it after each request, or keep it per request)',
                $request,
                implode(', ', $changed),
            ), ['request' => $request, 'changed' => $changed]);
        }
        return [...$raced, ...$changed];
    }

    /**
     * Statics that changed while this request and another one were in flight in the worker: whichever
     * of the two wrote it, each may read the other's value.
     *
     * @param array<string, string> $began
     * @param array<string, string> $now
     * @return list<string>
     */
    private function races(string $request, array $began, array $now): array
    {
        $raced = [];
        foreach ($now as $label => $print) {
            if (str_starts_with($label, 'static ') && isset($began[$label]) && $began[$label] !== $print && !isset($this->raced[$label])) {
                $this->raced[$label] = true;
                $this->reported[$label] = true;
                $raced[] = $label;
            }
        }
        if ($raced !== []) {
            $this->logger->warning(sprintf(
                'state race: %s changed while other requests were in flight in this worker during %s, so one user\'s request may read another\'s value: make it follow the coroutine (Weft\Coroutine\ProcessState::followStatic()), keep it per request, or serve this app with --app-instances 1',
                implode(', ', $raced),
                $request,
            ), ['request' => $request, 'raced' => $raced]);
        }
        return $raced;
    }

    /** @param array<string, string> $out */
    private function staticFingerprints(array &$out): void
    {
        $classes = get_declared_classes();
        for ($n = \count($classes); $this->scanned < $n; $this->scanned++) {
            $class = $classes[$this->scanned];
            if ($this->ignored($class)) {
                continue;
            }
            $reflection = new \ReflectionClass($class);
            if ($reflection->isInternal()) {
                continue;
            }
            foreach ($reflection->getProperties(\ReflectionProperty::IS_STATIC) as $property) {
                // Inherited statics are the parent's own storage unless redeclared: report them once, there.
                if ($property->getDeclaringClass()->name === $class && !isset($this->ignoredProperties["$class->{$property->name}"])) {
                    $this->statics[] = ["static $class::\${$property->name}", $property];
                }
            }
        }
        foreach ($this->statics as [$label, $property]) {
            // Each instance's own, switched with the coroutine: not state one request leaves another.
            if ($property->isInitialized() && !ProcessState::isFollowed(substr($label, 7))) {
                $out[$label] = self::fingerprint($property->getValue(), self::ARRAY_DEPTH);
            }
        }
    }

    /**
     * @param array<string, string> $out
     * @param string $owner how the object is named in labels
     * @param string $via " (held by ...)" for an object reached through a service, "" for a service
     * @param array<int, true> $seen objects already fingerprinted
     */
    private function objectFingerprints(array &$out, object $object, string $owner, string $via, int $depth, array &$seen): void
    {
        $class = $object::class;
        if ($object instanceof \Closure || $this->ignored($class)) {
            return;
        }
        foreach (get_mangled_object_vars($object) as $mangled => $value) {
            // "\0Class\0name" for private, "\0*\0name" for protected properties.
            $name = ($cut = strrpos((string) $mangled, "\0")) === false ? (string) $mangled : substr((string) $mangled, $cut + 1);
            if ($this->ignoredProperty($class, $name)) {
                continue;
            }
            $out["$owner->$name$via"] = self::fingerprint($value, self::ARRAY_DEPTH);
            if ($depth > 0 && \is_object($value) && !isset($seen[$id = spl_object_id($value)])) {
                $seen[$id] = true;
                $this->objectFingerprints($out, $value, $value::class, " (held by $owner->$name)", $depth - 1, $seen);
            }
        }
    }

    /** A "Class->property" entry covers the subclasses too (an app's kernel extends the framework's). */
    private function ignoredProperty(string $class, string $name): bool
    {
        if ($this->ignoredProperties === []) {
            return false;
        }
        foreach ($this->lineage[$class] ??= [$class, ...array_values(class_parents($class) ?: [])] as $owner) {
            if (isset($this->ignoredProperties["$owner->$name"])) {
                return true;
            }
        }
        return false;
    }

    private function ignored(string $class): bool
    {
        if (isset($this->ignoredClasses[$class])) {
            return $this->ignoredClasses[$class];
        }
        $ignored = false;
        foreach ($this->ignore as $entry) {
            $ignored = str_ends_with($entry, '\\')
                ? str_starts_with($class, $entry)
                : $class === $entry || is_subclass_of($class, $entry);
            if ($ignored) {
                break;
            }
        }
        return $this->ignoredClasses[$class] = $ignored;
    }

    private static function fingerprint(mixed $value, int $depth): string
    {
        if (\is_object($value)) {
            // A collection (SplObjectStorage, ArrayObject, WeakMap...) by its class and size: one
            // replaced by a fresh empty one after each request is a reset, one that grows is a leak.
            // Any other object by identity: a replaced collaborator.
            return $value instanceof \Countable && !$value instanceof \Closure
                ? 'c' . $value::class . '#' . \count($value)
                : 'o' . spl_object_id($value);
        }
        if (\is_array($value)) {
            $count = \count($value);
            if ($depth === 0 || $count > self::ARRAY_LIMIT) {
                // Deep or large: its size and keys still tell most changes apart, cheaply.
                return 'a' . $count . ':' . hash('xxh3', implode("\0", array_keys($value)));
            }
            $parts = [];
            foreach ($value as $key => $item) {
                $parts[] = $key . '=' . self::fingerprint($item, $depth - 1);
            }
            return 'a' . $count . ':' . hash('xxh3', implode("\0", $parts));
        }
        if (\is_string($value)) {
            return \strlen($value) > 64 ? 's' . hash('xxh3', $value) : 's' . $value;
        }
        if (\is_resource($value)) {
            return 'r' . (int) $value;
        }
        return get_debug_type($value) . ':' . var_export($value, true);
    }
}
