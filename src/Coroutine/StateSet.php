<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * One copy of every followed process-wide value (ProcessState): what one owner (a framework instance
 * and the request it serves) sees while its coroutines run. The scheduler installs it when one of its
 * coroutines resumes and saves it when another set's coroutine takes over.
 */
final class StateSet
{
    /** @param array<string, mixed> $values */
    private function __construct(private array $values)
    {
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
        return new self($this->values);
    }

    /**
     * Writes this set's values into the process. Values followed since this set was saved are left as
     * they are. $current, when given, holds the values in the process now (it was just saved): a value
     * that is the same there is not written again (a setlocale(), a timezone that every set shares).
     */
    public function install(?self $current = null): void
    {
        [, $writers, $others] = ProcessState::plan();
        $values = $this->values;
        foreach ($writers as $write) {
            $write($values);
        }
        $now = $current?->values;
        foreach ($others as $name => [, $set]) {
            if (!\array_key_exists($name, $values)) {
                continue;
            }
            $value = $values[$name];
            // Not for arrays: === would compare two equal arrays element by element.
            if ($now !== null && !\is_array($value) && \array_key_exists($name, $now) && $now[$name] === $value) {
                continue;
            }
            $set($value);
        }
    }

    /** Reads the process's values into this set. */
    public function save(): void
    {
        [$readers, , $others] = ProcessState::plan();
        $values = [];
        foreach ($readers as $read) {
            $read($values);
        }
        foreach ($others as $name => [$get]) {
            $values[$name] = $get();
        }
        $this->values = $values;
    }

    /** Gives this set a value for a name followed since it was saved. */
    public function put(string $name, mixed $value): void
    {
        $this->values[$name] = $value;
    }

    public function get(string $name): mixed
    {
        return $this->values[$name] ?? null;
    }
}
