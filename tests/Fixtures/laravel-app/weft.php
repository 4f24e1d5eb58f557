<?php

// The Weft entry file: `bin/weft serve weft.php`. The application boots once per worker; each request
// runs in a fresh sandbox of it (see Weft\Bridge\Laravel\LaravelHandler).
declare(strict_types=1);

use Weft\Bridge\Laravel\LaravelHandler;

require __DIR__ . '/vendor/autoload.php';

return LaravelHandler::fromBasePath(__DIR__);
