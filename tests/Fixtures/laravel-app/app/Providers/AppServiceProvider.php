<?php

declare(strict_types=1);

namespace App\Providers;

use App\Counter;
use App\Registry;
use Illuminate\Support\ServiceProvider;

final class AppServiceProvider extends ServiceProvider
{
    public function register(): void
    {
        // Resolved inside a request, so it lives in that request's sandbox and the next request
        // gets a new one.
        $this->app->singleton(Counter::class);
        // Resolved at boot (below), so it is the worker's one object: what a request puts in it,
        // the next one sees. Weft's leak warning names it.
        $this->app->singleton(Registry::class);
        $this->app->scoped(\App\RequestScoped::class);
    }

    public function boot(): void
    {
        $this->app->make(Registry::class);
        $this->app->make(\App\RequestScoped::class);
    }
}
