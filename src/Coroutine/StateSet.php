<?php

declare(strict_types=1);

namespace Weft\Coroutine;

use Weft\Ext\StaticProperties;

/**
 * One copy of every followed process-wide value (ProcessState): what one owner (a framework instance
 * and the request it serves) sees while its coroutines run. The scheduler installs it when one of its
 * coroutines resumes and saves it when another set's coroutine takes over.
 *
 * With the extension, the plain static properties are kept apart, as the list the plan's
 * StaticProperties snapshots (in its order, no key per value): a switch saves and restores them with
 * one call each. The list belongs to the StaticProperties that made it; once the plan changes (a value
 * followed since), it is turned back into named values, which every plan can write.
 */
final class StateSet
{
    /**
     * @param array<string, mixed> $values by name: everything but what $statics holds
     * @param null|array<int, mixed> $statics the plain static properties, as $staticsOf->snapshot() listed them
     */
    private function __construct(
        private array $values,
        private ?array $statics = null,
        private ?StaticProperties $staticsOf = null,
    ) {
    }

    /** The values as they are now. */
    public static function capture(): self
    {
        $set = new self([]);
        $set->save();
        return $set;
    }

    /** An independent copy: what one owner changes later is not seen by the other. */
    public function copy(): self
    {
        return new self($this->values, $this->statics, $this->staticsOf);
    }

    /**
     * Writes this set's values into the process. Values followed since this set was saved are left as
     * they are. (A switch from another set in place is replace(), which also skips the values that set
     * holds the same: kept apart from this, on the switch's hot path, rather than shared through a call.)
     */
    public function install(): void
    {
        [, $writers, $others, $native] = ProcessState::plan();
        if ($this->statics !== null) {
            if ($this->staticsOf === $native) {
                $native->restore($this->statics);
            } else {
                $this->name();
            }
        }
        $values = $this->values;
        if ($native !== null && $this->statics === null) {
            $native->write($values);
        }
        foreach ($writers as $write) {
            $write($values);
        }
        foreach ($others as $name => [, $set]) {
            if (\array_key_exists($name, $values)) {
                $set($values[$name]);
            }
        }
    }

    /**
     * A switch between two owners: saves the process's values into $current (the set in place), then
     * installs this one's (what $current->save() and install() do, with the plan fetched once
     * and each value that is not a static property compared as it is read back).
     */
    public function replace(self $current): void
    {
        [$readers, $writers, $others, $native] = ProcessState::plan();
        // Everything is read before anything is written: a getter may read what a writer changes.
        $saved = [];
        foreach ($readers as $read) {
            $read($saved);
        }
        foreach ($others as $name => [$get]) {
            $saved[$name] = $get();
        }
        $current->values = $saved;
        if ($native !== null) {
            // What $current's coroutine did not change is not built again (its list from the last switch).
            $current->statics = $native->snapshot($current->staticsOf === $native ? $current->statics : null);
            $current->staticsOf = $native;
            if ($this->statics !== null && $this->staticsOf !== $native) {
                $this->name();
            }
            if ($this->statics !== null) {
                $native->restore($this->statics);
            }
        } else {
            $current->statics = $current->staticsOf = null;
        }
        $values = $this->values;
        if ($native !== null && $this->statics === null) {
            $native->write($values);
        }
        foreach ($writers as $write) {
            $write($values);
        }
        foreach ($others as $name => [, $set]) {
            if (\array_key_exists($name, $values)) {
                $value = $values[$name];
                // Not for arrays: === would compare two equal arrays element by element.
                if (\is_array($value) || $saved[$name] !== $value) {
                    $set($value);
                }
            }
        }
    }

    /** Reads the process's values into this set. */
    public function save(): void
    {
        [$readers, , $others, $native] = ProcessState::plan();
        $values = [];
        foreach ($readers as $read) {
            $read($values);
        }
        foreach ($others as $name => [$get]) {
            $values[$name] = $get();
        }
        $this->values = $values;
        if ($native !== null) {
            $this->statics = $native->snapshot();
            $this->staticsOf = $native;
        } else {
            $this->statics = $this->staticsOf = null;
        }
    }

    /** Gives this set a value for a name followed since it was saved. */
    public function put(string $name, mixed $value): void
    {
        $this->name();
        $this->values[$name] = $value;
    }

    public function get(string $name): mixed
    {
        $this->name();
        return $this->values[$name] ?? null;
    }

    /** Turns the static properties' list back into named values (the plan changed, or one is asked for by name). */
    private function name(): void
    {
        if ($this->statics === null || $this->staticsOf === null) {
            return;
        }
        foreach ($this->staticsOf->keys() as $i => $key) {
            if (\array_key_exists($i, $this->statics)) {
                $this->values[$key] = $this->statics[$i];
            }
        }
        $this->statics = $this->staticsOf = null;
    }
}
