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
 * while one set is in use (a framework instance serving requests that never wait); when a wait lets
 * another owner's coroutine run, every value is read and written once.
 *
 * That switch runs several times per request of a framework app whose queries suspend (once per
 * query, when its coroutine resumes), over some forty values for Laravel, so its cost is a share of the
 * request's: followed static properties are not read through their closures but by one closure per
 * declaring class that reads or writes all of that class's at once (plan()), or with the extension by
 * one call for all (Weft\Ext\StaticProperties). With a closure call and a fetch by class name per
 * value, the switches cost a Laravel request that runs three queries a seventh of its instructions.
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

    /** @var array<string, array{class-string, string}> followed names that are plain static properties: declaring class, property */
    private static array $statics = [];

    /** @var list<array{list<string>, \Closure(array<string, mixed>): void, \Closure(array<string, mixed>): void}> followTogether()'s groups */
    private static array $together = [];

    /**
     * What StateSet reads and writes, built from the above when first needed after a change: one reader
     * and one writer per declaring class of the plain static properties, and the other values' closures.
     *
     * @var null|array{list<\Closure(array<string, mixed>): void>, list<\Closure(array<string, mixed>): void>, array<string, array{\Closure(): mixed, \Closure(mixed): void}>, ?\Weft\Ext\StaticProperties}
     */
    private static ?array $plan = null;

    /**
     * @param \Closure(): mixed $get reads the value
     * @param \Closure(mixed): void $set writes it
     */
    public static function follow(string $name, \Closure $get, \Closure $set): void
    {
        self::$followed[$name] = [$get, $set];
        unset(self::$statics[$name]);
        self::leaveGroup($name);
        self::$plan = null;
    }

    /**
     * Reads and writes several followed values (each already given to follow()) with one closure each
     * way instead of two calls per value: $read(array &$values) adds every one of $names to $values,
     * $write(array $values) writes those of them that $values has. Following or forgetting any of them
     * later ends the group (each is then read and written through its own closures again).
     *
     * @internal for Weft's own bridges (the superglobals: PhpGlobals)
     * @param list<string> $names
     * @param \Closure(array<string, mixed>): void $read
     * @param \Closure(array<string, mixed>): void $write
     */
    public static function followTogether(array $names, \Closure $read, \Closure $write): void
    {
        foreach ($names as $name) {
            if (!isset(self::$followed[$name])) {
                throw new \InvalidArgumentException("$name is not followed: follow() it first");
            }
            self::leaveGroup($name);
        }
        self::$together[] = [$names, $read, $write];
        self::$plan = null;
    }

    private static function leaveGroup(string $name): void
    {
        foreach (self::$together as $i => [$names]) {
            if (\in_array($name, $names, true)) {
                unset(self::$together[$i]);
            }
        }
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
        $name = "$owner::\$$property";
        self::follow($name, $get, $set);
        if (!$reflection->hasType() || $reflection->hasDefaultValue()) {
            // Always initialized: read and written with the rest of its class's (plan()).
            self::$statics[$name] = [$owner, $property];
        }
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
        unset(self::$followed[$name], self::$statics[$name]);
        self::leaveGroup($name);
        self::$plan = null;
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

    /**
     * How StateSet reads and writes every followed value: readers that add their values to the array
     * given by reference, writers that write those of theirs the array has (a value followed since it
     * was filled is left alone), the closures of the values that are not plain static properties, and,
     * with the extension, the object that snapshots and restores all plain static properties at once.
     *
     * @internal
     * @return array{list<\Closure(array<string, mixed>): void>, list<\Closure(array<string, mixed>): void>, array<string, array{\Closure(): mixed, \Closure(mixed): void}>, ?\Weft\Ext\StaticProperties}
     */
    public static function plan(): array
    {
        if (self::$plan !== null) {
            return self::$plan;
        }
        $byClass = [];
        foreach (self::$statics as $name => [$class, $property]) {
            $byClass[$class][$name] = $property;
        }
        $readers = $writers = [];
        $native = null;
        if ($byClass !== [] && \class_exists(\Weft\Ext\StaticProperties::class, false)) {
            // The extension reads or writes them all in one call, the classes and properties resolved
            // once, here (about a twentieth of the closures' cost), as a list in its own order
            // (StateSet keeps it so: no key to hash per value and switch).
            $native = new \Weft\Ext\StaticProperties(\array_change_key_case($byClass, \CASE_LOWER));
            $byClass = [];
        }
        foreach ($byClass as $class => $properties) {
            // Bound to the declaring class: self:: reaches its protected and private statics, and a
            // fetch through self:: skips the lookup of the class by name that $class:: pays each time.
            $readers[] = \Closure::bind(static function (array &$values) use ($properties): void {
                foreach ($properties as $name => $property) {
                    $values[$name] = self::$$property;
                }
            }, null, $class);
            $writers[] = \Closure::bind(static function (array $values) use ($properties): void {
                foreach ($properties as $name => $property) {
                    if (\array_key_exists($name, $values)) {
                        self::$$property = $values[$name];
                    }
                }
            }, null, $class);
        }
        $others = \array_diff_key(self::$followed, self::$statics);
        foreach (self::$together as [$names, $read, $write]) {
            $readers[] = $read;
            $writers[] = $write;
            foreach ($names as $name) {
                unset($others[$name]);
            }
        }
        return self::$plan = [$readers, $writers, $others, $native];
    }
}
