<?php

// The Weft entry file: `bin/weft serve weft.php`. The kernel boots once per worker; the bridge
// converts each request and resets the kernel's services (kernel.reset) between requests.
declare(strict_types=1);

use App\Kernel;
use Weft\Bridge\Symfony\SymfonyHandler;

require __DIR__ . '/vendor/autoload.php';

return SymfonyHandler::fromKernel(new Kernel($_SERVER['APP_ENV'] ?? 'prod', filter_var($_SERVER['APP_DEBUG'] ?? false, FILTER_VALIDATE_BOOL)));
