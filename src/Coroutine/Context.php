<?php

declare(strict_types=1);

namespace Weft\Coroutine;

/**
 * Values that belong to one coroutine. A coroutine reads its own values first, then its parent's (the
 * coroutine that spawned it), and so on; set() only ever writes its own. Per-request state lives here.
 */
final class Context
{
    /** @var array<string, mixed> */
    private array $values = [];

    /** @internal */
    public function __construct(private readonly ?Context $parent)
    {
    }

    /** The context of the running coroutine (outside of any coroutine: the process's root context). */
    public static function current(): self
    {
        $scheduler = Scheduler::get();
        return $scheduler->current?->context() ?? $scheduler->rootContext();
    }

    public function set(string $key, mixed $value): void
    {
        $this->values[$key] = $value;
    }

    public function get(string $key, mixed $default = null): mixed
    {
        for ($context = $this; $context !== null; $context = $context->parent) {
            if (\array_key_exists($key, $context->values)) {
                return $context->values[$key];
            }
        }
        return $default;
    }

    public function has(string $key): bool
    {
        for ($context = $this; $context !== null; $context = $context->parent) {
            if (\array_key_exists($key, $context->values)) {
                return true;
            }
        }
        return false;
    }

    /** Removes this coroutine's own value; a parent's value becomes visible again. */
    public function unset(string $key): void
    {
        unset($this->values[$key]);
    }
}
