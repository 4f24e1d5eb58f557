<?php // examples/static-site.php

declare(strict_types=1);

use Weft\Http\Compression\{Gzip, GzipOptions};
use Weft\Http\Message\{Request, Response};
use Weft\Http\Static\{StaticFiles, StaticOptions};

// The application: whatever no file under public/ answers.
$app = static fn (Request $request): Response => $request->path() === '/api/time'
    ? Response::json(['time' => gmdate(DATE_ATOM)])
    : Response::text("Not Found\n", 404);

// Files first, then the application; gzip around both, and the files told about it (precompressed
// FILE.gz / FILE.br siblings). (`bin/weft serve APP --static DIR` builds the same layers from its
// options; an app that wraps its own handler can pass `--gzip off`.)
$gzip = new GzipOptions();
return new Gzip(new StaticFiles(new StaticOptions(__DIR__ . '/public'), $app, $gzip), $gzip);
