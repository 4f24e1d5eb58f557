<?php

declare(strict_types=1);

namespace App;

use Closure;
use Illuminate\Http\Request;

/** A middleware that takes 30 ms on the response's way out (the /slow-error-page route of the blocking-call test). */
final class SlowOnTheWayOut
{
    public function handle(Request $request, Closure $next): mixed
    {
        $response = $next($request);
        usleep(30_000);
        return $response;
    }
}
