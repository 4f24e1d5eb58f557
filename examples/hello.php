<?php

// bin/weft serve examples/hello.php   then   curl http://127.0.0.1:8080/

declare(strict_types=1);

use Weft\Http\Message\Request;
use Weft\Http\Message\Response;

return static fn (Request $request): Response => new Response(200, ['Content-Type' => 'text/plain'], 'Hello World');
