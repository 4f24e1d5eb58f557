<?php

declare(strict_types=1);

namespace App;

use App\Controller\AppController;
use Symfony\Component\Routing\Route;
use Symfony\Component\Routing\RouteCollection;

final class Routes
{
    public static function collection(): RouteCollection
    {
        $routes = new RouteCollection();
        foreach ([
            'hello' => ['/', 'hello', ['GET']],
            'json' => ['/json', 'json', ['GET']],
            'echo' => ['/echo', 'echo', ['POST']],
            'headers' => ['/headers', 'headers', ['GET']],
            'counter' => ['/counter', 'counter', ['GET']],
            'leak' => ['/leak', 'leak', ['GET']],
            'fail' => ['/fail', 'fail', ['GET']],
            'stream' => ['/stream', 'stream', ['GET']],
            'file' => ['/file', 'file', ['GET']],
            'echoed' => ['/echoed', 'echoed', ['GET']],
            'big' => ['/big', 'big', ['GET']],
            'after' => ['/after-response', 'hello', ['GET']],
        ] as $name => [$path, $action, $methods]) {
            $routes->add($name, new Route($path, ['_controller' => AppController::class . '::' . $action], methods: $methods));
        }
        return $routes;
    }
}
