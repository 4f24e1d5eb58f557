<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * Process-wide values that follow the coroutine: static properties, superglobals, the default
 * timezone... that more than one owner (a framework instance, a request) needs its own copy of while
 * several of them are in flight in one worker.
 *
 * Each followed value is named and read and written through two closures. A StateSet holds one copy
 * of all of them; a coroutine bound to a set (Scheduler::bind()) runs with that set installed: whenever
 * the scheduler resumes a coroutine whose set is not the installed one, it saves the installed set
 * (reads every value back into it) and installs the coroutine's (writes its values). Coroutines bound to
 * no set run with whatever is installed and must not touch followed state. Switching costs nothing
 * while one set is in use (a framework instance serving requests that never wait), and two closure
 * calls per followed value when a wait lets another owner's coroutine run.
 *
 * ```php
 * // An application's own "current tenant", kept in a static: each request sees its own.
 * ProcessState::followStatic(Tenant::class, 'current');
 * ```
 *
 * Registration is for the whole worker and belongs at boot (an entry file, a service provider);
 * registering a name again replaces its closures.
 */
final class ProcessState
{
    /** @var array<string, array{\Closure(): mixed, \Closure(mixed): void}> */
    private static array $followed = [];

    /**
     * @param \Closure(): mixed $get reads the value
     * @param \Closure(mixed): void $set writes it
     */
    public static function follow(string $name, \Closure $get, \Closure $set): void
    {
        self::$followed[$name] = [$get, $set];
    }

    /**
     * Follows a static property of any visibility. A class that does not exist, or has no such static
     * property, is skipped (a framework version without it) and false is returned.
     */
    public static function followStatic(string $class, string $property): bool
    {
        if (!class_exists($class) || !property_exists($class, $property)) {
            return false;
        }
        $reflection = new \ReflectionProperty($class, $property);
        if (!$reflection->isStatic()) {
            throw new \InvalidArgumentException("$class::\$$property is not a static property");
        }
        $owner = $reflection->getDeclaringClass()->getName();
        // Bound to the declaring class's scope so protected and private properties are reachable.
        $get = \Closure::bind(static fn (): mixed => $owner::$$property, null, $owner);
        $set = \Closure::bind(static function (mixed $value) use ($owner, $property): void {
            $owner::$$property = $value;
        }, null, $owner);
        if ($reflection->hasType() && !$reflection->hasDefaultValue()) {
            // A typed property without a default starts uninitialized: read as null, and left alone
            // when a set that saw it uninitialized is installed.
            $read = $get;
            $write = $set;
            $get = static fn (): mixed => $reflection->isInitialized() ? $read() : null;
            $set = static function (mixed $value) use ($write): void {
                if ($value !== null) {
                    $write($value);
                }
            };
        }
        self::follow("$owner::\$$property", $get, $set);
        return true;
    }

    /**
     * Runs $task (a framework's boot) and makes every static property it wrote follow the coroutine:
     * what a boot stores in statics (a resolver closure over its application, a registry of
     * callbacks) belongs to the instance that booted, and the next boot would otherwise overwrite it
     * for all. Returns $task's result and, by reference, the names newly followed with the values
     * they had before $task ran.
     *
     * @template R
     * @param \Closure(): R $task
     * @param array<string, mixed> $before set to name => value before $task, for each name followed now
     * @return R
     */
    public static function followWrittenBy(\Closure $task, ?array &$before = null): mixed
    {
        $old = self::staticValues();
        $result = $task();
        $before = [];
        foreach (self::staticValues() as $name => [$class, $property, $value, $default]) {
            $was = \array_key_exists($name, $old) ? $old[$name][2] : $default;
            if ($was !== $value && !isset(self::$followed[$name]) && self::followStatic($class, $property)) {
                $before[$name] = $was;
            }
        }
        return $result;
    }

    /**
     * Every initialized static property declared by a user class (not Weft's, Composer's or PHPUnit's),
     * with its default.
     *
     * @return array<string, array{class-string, string, mixed, mixed}>
     */
    private static function staticValues(): array
    {
        $values = [];
        foreach (get_declared_classes() as $class) {
            if (str_starts_with($class, 'Weft\\') || str_starts_with($class, 'Composer\\') || str_starts_with($class, 'PHPUnit\\')) {
                continue;
            }
            $reflection = new \ReflectionClass($class);
            if ($reflection->isInternal()) {
                continue;
            }
            foreach ($reflection->getProperties(\ReflectionProperty::IS_STATIC) as $property) {
                if ($property->class !== $class || !$property->isInitialized()) {
                    continue;
                }
                $values["$class::\$$property->name"] = [$class, $property->name, $property->getValue(), $property->getDefaultValue()];
            }
        }
        return $values;
    }

    public static function forget(string $name): void
    {
        unset(self::$followed[$name]);
    }

    public static function isFollowed(string $name): bool
    {
        return isset(self::$followed[$name]);
    }

    /** @return list<string> */
    public static function names(): array
    {
        return array_keys(self::$followed);
    }

    /** @internal @return array<string, array{\Closure(): mixed, \Closure(mixed): void}> */
    public static function accessors(): array
    {
        return self::$followed;
    }
}
