<?php

declare(strict_types=1);

namespace App;

use Illuminate\Database\Eloquent\Builder;
use Illuminate\Database\Eloquent\Model;
use Illuminate\Database\Eloquent\Scope;

/** A scope a request adds for itself (as a tenant scope is), carrying the request's id. */
final class ProbeScope implements Scope
{
    public function __construct(public readonly string $id)
    {
    }

    public function apply(Builder $builder, Model $model): void
    {
    }
}
