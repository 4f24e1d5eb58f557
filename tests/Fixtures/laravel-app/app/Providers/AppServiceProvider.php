<?php

declare(strict_types=1);

namespace App\Providers;

use App\Counter;
use App\Registry;
use Illuminate\Auth\GenericUser;
use Illuminate\Http\Request;
use Illuminate\Support\Facades\Auth;
use Illuminate\Support\Facades\Gate;
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

        // What a real application configures in boot(), as Laravel's documentation shows: a guard
        // of its own and an ability. They must hold in every request, not only the first.
        config(['auth.guards.token' => ['driver' => 'fixture-token']]);
        Auth::viaRequest('fixture-token', static fn (Request $request) => $request->header('X-Token') === 'secret'
            ? new GenericUser(['id' => 42])
            : null);
        Gate::define('see-dashboard', static fn (?GenericUser $user = null) => $user !== null);

        // A handler for requests whose queries add up to too long, as Laravel's documentation shows:
        // it must fire for the request that was slow, not for the worker's total.
        if (config('database.default') === 'mysql' && env('DB_URL') !== null) {
            \Illuminate\Support\Facades\DB::whenQueryingForLongerThan(150, static function (): void {
                file_put_contents(storage_path('app/slow-requests.txt'), request()->fullUrl() . "\n", FILE_APPEND);
            });
        }
    }
}
