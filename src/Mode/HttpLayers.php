<?php

declare(strict_types=1);

namespace Weft\Mode;

use Psr\Http\Server\RequestHandlerInterface;
use Weft\Http\Compression\Gzip;
use Weft\Http\Compression\GzipOptions;
use Weft\Http\Static\StaticFiles;
use Weft\Http\Static\StaticOptions;

/**
 * The layers the serve command puts around an HTTP application, outermost first: gzip, then the
 * document root, then the application. Gzip is outside so that files and application responses are
 * compressed alike; the document root is inside it so a file answers before the application runs.
 */
final class HttpLayers
{
    public static function wrap(\Closure|RequestHandlerInterface $application, ?StaticOptions $static, ?GzipOptions $gzip): \Closure|RequestHandlerInterface
    {
        $handler = $application;
        if ($static !== null) {
            // Told about the gzip layer: precompressed FILE.gz / FILE.br siblings, and Vary on every answer that varies.
            $handler = new StaticFiles($static, $handler, $gzip);
        }
        if ($gzip !== null) {
            $handler = new Gzip($handler, $gzip);
        }
        return $handler === $application ? $application : $handler(...);
    }
}
