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

    /** Writes this set's values into the process. Values followed since this set was saved are left as they are. */
    public function install(): void
    {
        foreach (ProcessState::accessors() as $name => [, $set]) {
            if (\array_key_exists($name, $this->values)) {
                $set($this->values[$name]);
            }
        }
    }

    /** Reads the process's values into this set. */
    public function save(): void
    {
        $values = [];
        foreach (ProcessState::accessors() as $name => [$get]) {
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
