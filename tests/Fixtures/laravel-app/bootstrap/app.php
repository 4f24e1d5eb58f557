<?php

use Illuminate\Foundation\Application;
use Illuminate\Foundation\Configuration\Exceptions;
use Illuminate\Foundation\Configuration\Middleware;

return Application::configure(basePath: dirname(__DIR__))
    ->withRouting(web: __DIR__ . '/../routes/web.php')
    ->withMiddleware(function (Middleware $middleware): void {
        // fruitcake/php-cors, which HandleCors needs, is not in the registry copy (see ../registry-gaps).
        $middleware->remove(\Illuminate\Http\Middleware\HandleCors::class);
        $middleware->validateCsrfTokens(except: ['echo']);
    })
    ->withExceptions(function (Exceptions $exceptions): void {
        // The application's own last word on an error response, which Weft's bridge must keep calling
        // (it wraps this callback to time the error page apart: LaravelBridgeTest).
        $exceptions->respond(function (\Symfony\Component\HttpFoundation\Response $response): \Symfony\Component\HttpFoundation\Response {
            $response->headers->set('X-Fixture-Error-Responded', 'yes');
            return $response;
        });
    })
    ->create();
