<?php

// The Weft entry file: `bin/weft serve weft.php`. The kernel boots once per worker; the bridge
// converts each request and resets the kernel's services (kernel.reset) between requests.
declare(strict_types=1);

use App\Kernel;
use Symfony\Component\Dotenv\Dotenv;
use Weft\Bridge\Symfony\SymfonyHandler;

require __DIR__ . '/vendor/autoload.php';

if (class_exists(Dotenv::class) && is_file(__DIR__ . '/.env')) {
    (new Dotenv())->bootEnv(__DIR__ . '/.env');   // .env, .env.local, .env.local.php: what public/index.php does through symfony/runtime
}

return SymfonyHandler::fromKernel(new Kernel($_SERVER['APP_ENV'] ?? 'prod', filter_var($_SERVER['APP_DEBUG'] ?? false, FILTER_VALIDATE_BOOL)));
