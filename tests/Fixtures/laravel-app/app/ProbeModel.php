<?php

declare(strict_types=1);

namespace App;

use Illuminate\Database\Eloquent\Model;

/** A model over a derived table (no migration needed), for the concurrency probe (/identity). */
final class ProbeModel extends Model
{
    public $timestamps = false;
    protected $guarded = [];

    /** Registered on the dispatcher of the instance this model boots in. */
    protected static function booted(): void
    {
        static::retrieved(static function (self $model): void {
            $model->setAttribute('seen_by_booted_listener', true);
        });
    }
}
